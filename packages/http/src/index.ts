export * from './errors.ts';
export * from './app.ts';
