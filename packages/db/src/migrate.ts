import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withMaintenanceDeadline } from './deadline.ts';
import type { DbPool } from './pool.ts';

/** Advisory lock key shared by every replica that runs migrations. */
const MIGRATION_LOCK = 727_001;

export interface MigrationResult {
  applied: string[];
  skipped: number;
}

/**
 * Applies `dir/*.sql` in name order, each once, each in its own transaction, recorded in
 * schema_migrations. A session advisory lock makes concurrent starters wait for each other.
 */
export function runMigrations(pool: DbPool, dir: string): Promise<MigrationResult> {
  return withMaintenanceDeadline(async () => {
    const files = (await readdir(dir)).filter((f) => /^\d+.*\.sql$/.test(f)).sort();
    const client = await pool.connect();
    try {
      await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
      try {
        await client.query(
          'create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())',
        );
        const done = new Set((await client.query<{ name: string }>('select name from schema_migrations')).rows.map((r) => r.name));
        const applied: string[] = [];
        for (const file of files) {
          if (done.has(file)) continue;
          const sql = await readFile(join(dir, file), 'utf8');
          await client.query('begin');
          try {
            await client.query(sql);
            await client.query('insert into schema_migrations (name) values ($1)', [file]);
            await client.query('commit');
          } catch (err) {
            if (client.brokenBy === undefined) await client.query('rollback').catch(() => {});
            throw new Error(`Migration ${file} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
          }
          applied.push(file);
        }
        return { applied, skipped: done.size };
      } finally {
        if (client.brokenBy === undefined) await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => {});
      }
    } finally {
      client.release();
    }
  });
}
