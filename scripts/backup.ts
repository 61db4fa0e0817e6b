/**
 * npm run backup -- [file]             a logical backup of the database (packages/db/src/backup.ts)
 * npm run backup -- --restore <file>   loads one into an empty database
 *
 * Uses the same configuration as the server. With DATABASE_URL, that database: a backup reads one
 * consistent snapshot while the servers keep serving. Without it, the embedded default under
 * DATA_DIR (DATA_DIR/pglite): PGlite has one owner at a time, so while `npm start` runs the command
 * says to stop it and exits 1 (nothing is read or written). The default file is
 * DATA_DIR/backups/backup-<time>.jsonl. A restore applies this tree's migrations to the target
 * first (an empty database, or a new DATA_DIR), then loads the rows; a target that is not empty
 * is refused. docs/OPERATIONS.md, "Backups and restore".
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@yumina/config';
import { backupDatabase, embeddedHolder, openDatabase, restoreDatabase, runMigrations } from '@yumina/db';
import { NOTEBOOK_TABLE_DDL } from '../containers/api/src/companion/table.ts';
import { repoRoot } from '../containers/api/src/web.ts';

const args = process.argv.slice(2);
const restore = args[0] === '--restore';
const file = restore ? args[1] : args[0];
if (restore && !file) {
  console.error('usage: npm run backup -- [file] | npm run backup -- --restore <file>');
  process.exit(2);
}
let code = 0;
try {
  const config = loadConfig(process.env);
  if (!config.database.url) {
    const holder = embeddedHolder(join(config.dataDir, 'pglite'));
    if (holder) {
      console.error(
        `The embedded database under ${join(config.dataDir, 'pglite')} is in use by the running server (process ${holder.pid}). Stop it (Ctrl+C in npm start), then run npm run backup again.`,
      );
      process.exit(1);
    }
  }
  const db = await openDatabase(config);
  try {
    const url = db.url;
    if (restore) {
      await runMigrations(db.primary, join(repoRoot, 'migrations'));
      const { rows } = await db.primary.query<{ n: string }>('select count(*)::text as n from accounts');
      if (Number(rows[0]!.n) > 0) throw new Error('The target database already holds accounts: restore into an empty database (or a new DATA_DIR).');
      const summary = await restoreDatabase(url, file!, { provision: [NOTEBOOK_TABLE_DDL] });
      console.log(`Restored ${file}: ${Object.values(summary.rows).reduce((a, b) => a + b, 0)} rows in ${Object.keys(summary.rows).length} tables.`);
    } else {
      const out = file ?? join(config.dataDir, 'backups', `backup-${new Date().toISOString().replaceAll(':', '-')}.jsonl`);
      if (!file) mkdirSync(join(config.dataDir, 'backups'), { recursive: true });
      const summary = await backupDatabase(url, out);
      console.log(`Backed up to ${out}: ${Object.values(summary.rows).reduce((a, b) => a + b, 0)} rows in ${Object.keys(summary.rows).length} tables, schema of ${summary.migrations} migrations.`);
    }
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `backup failed: ${(err as Error).message}`);
  code = 1;
}
process.exit(code);
