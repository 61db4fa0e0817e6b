import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { backupDatabase, DbPool, restoreDatabase, runMigrations, startEmbeddedPostgres } from '@yumina/db';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTEBOOK_TABLE_DDL } from '../containers/api/src/companion/table.ts';
import { type FakeOpenAi, startFakeOpenAi } from './support/fake-openai.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { Browser, startTestServer, type TestServer } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * Issue 51, point 4: backups that restore. A database populated by a player's journey is backed
 * up (packages/db/src/backup.ts: one REPEATABLE READ snapshot, every table as JSON lines, no
 * pg_dump of the server's version needed) while its server runs, restored into an empty database,
 * and every row of every table is found there, byte for byte, with the sequences where they were.
 * A file cut short restores nothing. And the embedded default's `npm run backup` refuses while a
 * server holds its data folder, then backs it up and restores it into a new one.
 */
const root = resolve(import.meta.dirname, '..');
const willow = () => JSON.parse(readFileSync(resolve(root, 'packages/world/samples/willow-street.json'), 'utf8')) as Record<string, unknown>;

/** Every public table's row count and a digest of its rows (each row's text, sorted). */
async function contents(url: string): Promise<Record<string, string>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await contentsOn(c);
  } finally {
    await c.end();
  }
}

async function contentsOn(c: pg.ClientBase): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const { rows: tables } = await c.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind in ('r', 'p') order by 1`,
  );
  for (const { name } of tables) {
    const { rows } = await c.query<{ n: string; digest: string | null }>(`select count(*)::text as n, md5(string_agg(t::text, E'\\n' order by t::text)) as digest from "${name}" t`);
    out[name] = `${rows[0]!.n} ${rows[0]!.digest ?? '-'}`;
  }
  return out;
}

/** Every sequence's position (not part of a snapshot: compared with what the backup recorded). */
async function sequences(url: string): Promise<Record<string, { value: string; called: boolean }>> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const out: Record<string, { value: string; called: boolean }> = {};
    const { rows } = await c.query<{ name: string }>(`select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind = 'S'`);
    for (const { name } of rows) {
      const { rows: s } = await c.query<{ value: string; called: boolean }>(`select last_value::text as value, is_called as called from "${name}"`);
      out[name] = s[0]!;
    }
    return out;
  } finally {
    await c.end();
  }
}

async function migratedEmpty(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  const pool = new DbPool({ name: 'primary', connectionString: database.url, max: 2, queryTimeoutMs: 60_000, connectTimeoutMs: 5_000 });
  try {
    await runMigrations(pool, join(root, 'migrations'));
  } finally {
    await pool.end();
  }
  return database;
}

describe('backups that restore (issue 51, point 4)', () => {
  let provider: FakeOpenAi;
  let server: TestServer;
  const dir = mkdtempSync(join(tmpdir(), 'yumina-backup-'));
  const targets: TestDatabase[] = [];

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: provider.url, OFFICIAL_AI_API_KEY: 'platform-key', OFFICIAL_AI_MODEL: 'platform-model', WELCOME_CREDITS: '100' });
    // a populated database: accounts, a world (its search terms, assets), sessions, turns on credits (ledger, usage), what was sent
    for (let p = 0; p < 2; p++) {
      const b = new Browser(server.url);
      await signUp(server, b, { email: `backup-${p}-${Date.now()}@example.com` });
      const world = (await (await b.fetch('/api/worlds', { method: 'POST', json: { world: willow() } })).json()) as { id: string };
      const session = (await (await b.fetch(`/api/worlds/${world.id}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
      for (let t = 0; t < 2; t++) {
        provider.enqueue({ kind: 'completion', content: `Mina answers, turn ${t}.`, usage: { prompt_tokens: 900, completion_tokens: 40 } });
        const res = await b.fetch(`/api/sessions/${session.session.id}/messages`, { method: 'POST', json: { content: `Line ${t}: do you remember the cafe by the station?` } });
        expect(res.status).toBe(200);
        await res.text();
      }
    }
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
    for (const t of targets) await t.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a backup taken while the server runs restores into an empty database with every row of every table', async () => {
    const file = join(dir, 'backup.jsonl');
    // the source as the backup sees it: one snapshot shared by both (the server keeps writing: logins, maintenance)
    const source = new pg.Client({ connectionString: server.database.url });
    await source.connect();
    await source.query('begin isolation level repeatable read read only');
    const snapshot = (await source.query<{ id: string }>('select pg_export_snapshot() as id')).rows[0]!.id;
    const summary = await backupDatabase(server.database.url, file, { snapshot });
    const before = await contentsOn(source);
    await source.query('commit');
    await source.end();
    expect(summary.rows.accounts).toBeGreaterThanOrEqual(2);
    expect(summary.rows.chat_messages).toBeGreaterThanOrEqual(10);
    expect(summary.rows.credit_ledger).toBeGreaterThan(0);
    expect(summary.rows.chat_prompt_records).toBeGreaterThanOrEqual(4);

    const target = await migratedEmpty();
    targets.push(target);
    const restored = await restoreDatabase(target.url, file, { provision: [NOTEBOOK_TABLE_DDL] });
    expect(restored.rows).toEqual(summary.rows);
    const copy = await contents(target.url);
    expect(Object.keys(copy).length).toBeGreaterThan(40);
    expect(copy).toEqual(before);
    // the sequences where the backup found them (credit_ledger's identity among them)
    const recorded = readFileSync(file, 'utf8').split('\n').map((line) => (line.startsWith('{"sequences"') ? (JSON.parse(line) as { sequences: Record<string, unknown> }).sequences : null)).find(Boolean);
    expect(Object.keys(recorded!)).toContain('credit_ledger_id_seq');
    expect(await sequences(target.url)).toEqual(recorded);
  });

  it('a backup cut short, or made by a different schema, restores nothing', async () => {
    const file = join(dir, 'whole.jsonl');
    await backupDatabase(server.database.url, file);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    const cut = join(dir, 'cut.jsonl');
    writeFileSync(cut, `${lines.slice(0, -2).join('\n')}\n`);
    const target = await migratedEmpty();
    targets.push(target);
    const before = await contents(target.url);
    await expect(restoreDatabase(target.url, cut, { provision: [NOTEBOOK_TABLE_DDL] })).rejects.toThrow(/cut short/);
    expect(await contents(target.url)).toEqual(before);
    const header = JSON.parse(lines[0]!) as { migrations: string[] };
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, [JSON.stringify({ ...header, migrations: [...header.migrations, '999_later.sql'] }), ...lines.slice(1)].join('\n'));
    await expect(restoreDatabase(target.url, other, { provision: [NOTEBOOK_TABLE_DDL] })).rejects.toThrow(/restore with the release that made it.*999_later\.sql/);
    expect(await contents(target.url)).toEqual(before);
    // a table the target lacks (the notebook's, not provisioned) is named, and nothing is written
    await expect(restoreDatabase(target.url, file)).rejects.toThrow(/tables the target does not have \(game_npc_companion_memory\)/);
    expect(await contents(target.url)).toEqual(before);
  });

  it('npm run backup on the embedded default: refused while a server holds the data folder, then backs it up and restores it into a new one', async () => {
    const dataDir = join(dir, 'embedded');
    const run = (args: string[], data: string) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'scripts/backup.ts', ...args], {
        cwd: root,
        encoding: 'utf8',
        timeout: 120_000,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: data, LOG_LEVEL: 'fatal' },
      });
    // a running embedded database (this process holds it, as npm start would), with rows
    const running = await startEmbeddedPostgres(join(dataDir, 'pglite'));
    try {
      const pool = new DbPool({ name: 'primary', connectionString: running.url, max: 1, queryTimeoutMs: 60_000, connectTimeoutMs: 5_000, preparedStatements: false });
      await runMigrations(pool, join(root, 'migrations'));
      await pool.query(`insert into accounts (id, email, display_name) values ('acc_backup_embedded_01', 'embedded@example.com', 'Embedded')`);
      await pool.end();
      const refused = run([], dataDir);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toMatch(/in use by the running server.*Stop it/s);
    } finally {
      await running.stop();
    }
    const file = join(dir, 'embedded.jsonl');
    const taken = run([file], dataDir);
    expect(taken.stderr).toBe('');
    expect(taken.status).toBe(0);
    expect(taken.stdout).toMatch(/Backed up to .*embedded\.jsonl/);
    const restoredDir = join(dir, 'embedded-restored');
    const restored = run(['--restore', file], restoredDir);
    expect(restored.stderr).toBe('');
    expect(restored.status).toBe(0);
    // the restored folder holds the same rows
    const again = await startEmbeddedPostgres(join(restoredDir, 'pglite'));
    try {
      const c = new pg.Client({ connectionString: again.url });
      await c.connect();
      const { rows } = await c.query<{ email: string }>('select email from accounts');
      await c.end();
      expect(rows).toEqual([{ email: 'embedded@example.com' }]);
    } finally {
      await again.stop();
    }
  }, 240_000);
});
