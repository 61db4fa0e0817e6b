export * from './app.ts';
export * from './server.ts';
export * from './context.ts';
