export * from './errors.ts';
export * from './app.ts';
export * from './cross-site.ts';
export * from './input-guards.ts';
