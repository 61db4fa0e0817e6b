export * from './errors.ts';
export * from './permissions.ts';
export * from './body.ts';
export * from './records.ts';
export * from './favorites.ts';
export * from './inbox.ts';
export * from './channel.ts';
export * from './cursor.ts';
