export * from './errors.ts';
export * from './deadline.ts';
export * from './pool.ts';
export * from './database.ts';
export * from './migrate.ts';
export { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.ts';
