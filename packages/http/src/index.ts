export * from './errors.ts';
export * from './app.ts';
export * from './cross-site.ts';
export * from './input-guards.ts';
export * from './login.ts';
export * from './function-resources.ts';
export * from './proxy-trust.ts';
export * from './one-line.ts';
