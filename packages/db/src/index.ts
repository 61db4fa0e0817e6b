export * from './errors.ts';
export * from './deadline.ts';
export * from './pool.ts';
export * from './database.ts';
export * from './migrate.ts';
export { embeddedHolder, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.ts';
export { BACKUP_FORMAT, backupDatabase, type BackupSummary, restoreDatabase } from './backup.ts';
