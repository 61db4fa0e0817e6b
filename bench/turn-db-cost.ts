/**
 * `DATABASE_URL=… REDIS_URL=redis://127.0.0.1:6379 node --import tsx bench/turn-db-cost.ts [turns]` (DATABASE_URL only
 * for the test helpers it loads; the turns run on a PostgreSQL of its own): PostgreSQL's
 * own CPU per turn (docs/CAPACITY.md), which the turn bench does not measure (it reads the server
 * process's). A PostgreSQL of its own (tests/support/postgres-server.ts: fsync and synchronous
 * commit off, so this is CPU, not disk), the container in this process on it, a loopback provider;
 * a player on its own connection sends turns one at a time and ten at once (ten sessions); the CPU
 * of every process of that PostgreSQL (the postmaster's children: backends, WAL writer,
 * checkpointer, autovacuum) over each phase, from /proc, divided by its turns.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig } from '@yumina/config';
import { DbPool, runMigrations } from '@yumina/db';
import pg from 'pg';
import { startServer } from '../containers/api/src/server.ts';
import { startFakeOpenAi } from '../tests/support/fake-openai.ts';
import { OwnPostgres } from '../tests/support/postgres-server.ts';
import { testPrefix } from '../tests/support/redis.ts';
import { Browser } from '../tests/support/server.ts';
import { signUp } from '../tests/support/sign-up.ts';

const root = resolve(import.meta.dirname, '..');
const TURNS = Number(process.argv[2] ?? 200);
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU milliseconds of the postmaster and all its children so far. */
function postgresCpuMs(postmaster: number): number {
  const children = execFileSync('ps', ['-o', 'pid=', '--ppid', String(postmaster)], { encoding: 'utf8' }).split('\n').map((s) => Number(s.trim())).filter(Boolean);
  let ticks = 0;
  for (const pid of [postmaster, ...children]) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // ended meanwhile
    }
  }
  return (ticks * 1000) / TICKS;
}

const own = await OwnPostgres.start({ settings: { max_connections: '100' } });
const provider = await startFakeOpenAi({ apiKey: null });
const dataDir = mkdtempSync(join(tmpdir(), 'yumina-turn-db-cost-'));
try {
  const admin = new pg.Client({ connectionString: own.url });
  await admin.connect();
  await admin.query('create database cost');
  await admin.end();
  const url = own.url.replace(/\/postgres$/, '/cost');
  const pool = new DbPool({ name: 'primary', connectionString: url, max: 2, queryTimeoutMs: 60_000, connectTimeoutMs: 5_000 });
  await runMigrations(pool, join(root, 'migrations'));
  await pool.end();
  provider.setHandler(() => ({ kind: 'completion', content: 'The corridor narrows and the lantern light shakes on the wet stones. '.repeat(16), chunks: 100 }));
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'fatal',
    DATA_DIR: dataDir,
    SAMPLE_WORLDS: '0',
    NODE_ENV: 'test',
    PASSWORD_HASH_COST: '10',
    DATABASE_URL: url,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: testPrefix(),
    AI_PRIVATE_NETWORK_ACCESS: 'allow',
  });
  const server = await startServer(config, { web: false });
  const b = new Browser(server.url);
  await signUp({ url: server.url, dataDir }, b, { email: `cost-${Date.now()}@example.com` });
  await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'k' } });
  const world = JSON.parse(readFileSync(join(root, 'packages/world/samples/willow-street.json'), 'utf8')) as Record<string, unknown>;
  const worldId = ((await (await b.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
  const session = async () => ((await (await b.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;
  const turn = async (id: string, n: number) => {
    const res = await b.fetch(`/api/sessions/${id}/messages`, { method: 'POST', json: { content: `I raise the lantern and walk on, step ${n}.` } });
    const text = await res.text();
    if (!text.includes('event: done')) throw new Error(`a turn did not finish: ${res.status} ${text.slice(-300)}`);
  };
  const postmaster = own.pid!;
  const phase = async (name: string, concurrency: number) => {
    const sessions = await Promise.all(Array.from({ length: concurrency }, session));
    for (let w = 0; w < 10; w++) await Promise.all(sessions.map((s) => turn(s, -w)));
    const cpu0 = postgresCpuMs(postmaster);
    const server0 = process.cpuUsage();
    const t0 = Date.now();
    const per = Math.ceil(TURNS / concurrency);
    await Promise.all(sessions.map(async (s) => {
      for (let n = 0; n < per; n++) await turn(s, n);
    }));
    const turns = per * concurrency;
    const pgMs = postgresCpuMs(postmaster) - cpu0;
    const used = process.cpuUsage(server0);
    console.log(
      `turn-db-cost: ${name}: ${turns} turns in ${((Date.now() - t0) / 1000).toFixed(1)} s; PostgreSQL CPU ${(pgMs / turns).toFixed(2)} ms a turn; this process (server, client and provider) ${((used.user + used.system) / 1000 / turns).toFixed(2)} ms a turn`,
    );
  };
  await phase('concurrency 1', 1);
  await phase('concurrency 10', 10);
  await server.close();
} finally {
  await provider.close();
  await own.destroy();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(0);
