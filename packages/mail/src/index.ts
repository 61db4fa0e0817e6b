export * from './transport.ts';
export * from './smtp.ts';
export * from './ses.ts';
export * from './outbox.ts';
export * from './seal.ts';
export * from './queue.ts';
export * from './open.ts';
