import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateSigningKeyMaterial } from '@yumina/identity';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BaselineServer, baselineCheckout, PREVIOUS_RELEASE, startBaselineServer } from '../bench/baseline.ts';
import { type FakeOpenAi, startFakeOpenAi } from './support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from './support/server.ts';
import { testPrefix } from './support/redis.ts';
import { signUp } from './support/sign-up.ts';

/**
 * Issue 51, point 5: migrations without downtime (the expand/contract rule, docs/OPERATIONS.md).
 * During a rolling deploy the previous release's replicas keep serving on the schema this tree's
 * migrations made. This runs the previous release's own server (its commit checked out as a git
 * worktree under .bench/baselines/, installed once and reused: bench/baseline.ts) on a database
 * this tree migrated, beside this tree's server on the same database, and walks a player's journey
 * across both: sign up, a world, a session, a turn, its history and what was sent.
 * And it reads this tree's new migrations for the statements the rule keeps out of an expand step.
 */
const root = resolve(import.meta.dirname, '..');
const previous = process.env.PREVIOUS_RELEASE ?? PREVIOUS_RELEASE;
const willow = () => JSON.parse(readFileSync(resolve(root, 'packages/world/samples/willow-street.json'), 'utf8')) as Record<string, unknown>;

/** The migrations this tree adds to the previous release's. */
function newMigrations(): string[] {
  const before = new Set(execFileSync('git', ['ls-tree', '--name-only', `${previous}:migrations`], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean));
  return readdirSync(resolve(root, 'migrations')).filter((f) => /^\d+.*\.sql$/.test(f) && !before.has(f));
}

/**
 * What an expand migration may not do while the previous release still runs: take away or rename
 * what it reads, change a column's type, or demand a value it does not write. A contract migration
 * says so on a line `-- contract: <what no running release reads any more>` (docs/OPERATIONS.md).
 */
const CONTRACT = [/\bdrop\s+(table|column|view|function|type)\b/i, /\brename\b/i, /\balter\s+column\s+\S+\s+(set\s+data\s+)?type\b/i, /\bset\s+not\s+null\b/i, /\badd\s+column\s+(if\s+not\s+exists\s+)?\S+\s+[^,;]*\bnot\s+null\b(?![^,;]*\bdefault\b)/i];
function contractStatements(sql: string): string[] {
  const code = sql.replace(/--[^\n]*/g, '');
  return CONTRACT.filter((re) => re.test(code)).map((re) => re.source);
}

describe('the previous release on this tree’s schema (a rolling deploy)', () => {
  let provider: FakeOpenAi;
  let current: TestServer;
  let old: BaselineServer;

  beforeAll(async () => {
    // first use checks out and installs the release (minutes, once); later runs reuse it
    const dir = baselineCheckout(previous);
    provider = await startFakeOpenAi({ apiKey: null });
    // one deployment: the same database, Redis keys (caches, events) and secrets for both releases
    const shared = {
      AI_PRIVATE_NETWORK_ACCESS: 'allow',
      REDIS_KEY_PREFIX: testPrefix(),
      SECRETS_KEY: randomBytes(32).toString('base64url'),
      IDENTITY_SIGNING_KEY: (await generateSigningKeyMaterial()).key,
    };
    current = await startTestServer(shared);
    old = await startBaselineServer(dir, { ...shared, SIGNUP_RATE_LIMIT_PER_HOUR: '1000' }, { database: current.database });
  }, 900_000);
  afterAll(async () => {
    await old?.stop();
    await current?.stop();
    await provider?.close();
  });

  it('this tree’s new migrations only expand (no drop, rename, type change or new required column without a contract line)', () => {
    const added = newMigrations();
    for (const file of added) {
      const sql = readFileSync(resolve(root, 'migrations', file), 'utf8');
      if (/^--\s*contract:/m.test(sql)) continue;
      expect({ file, contract: contractStatements(sql) }).toEqual({ file, contract: [] });
    }
    // the check itself finds what it is for
    expect(contractStatements('alter table worlds drop column title;')).not.toEqual([]);
    expect(contractStatements('alter table worlds rename column title to name;')).not.toEqual([]);
    expect(contractStatements('alter table worlds add column rating integer not null;')).not.toEqual([]);
    expect(contractStatements('alter table worlds add column rating integer not null default 0;')).toEqual([]);
    expect(contractStatements('create table t (id text primary key, body text not null);')).toEqual([]);
  });

  it('the previous release serves a player’s journey on the new schema, beside this tree’s server on the same database', async () => {
    const db = new pg.Client({ connectionString: current.database.url });
    await db.connect();
    try {
      // the database has this tree's migrations, the new ones included, and the old server started on it
      const applied = new Set((await db.query<{ name: string }>('select name from schema_migrations')).rows.map((r) => r.name));
      for (const file of newMigrations()) expect(applied.has(file), file).toBe(true);
    } finally {
      await db.end();
    }

    // On the previous release: sign up, connect a provider, a world, a session, a turn.
    const player = new Browser(old.url);
    await signUp({ url: old.url, outbox: old.outbox }, player, { email: `previous-${Date.now()}@example.com` });
    expect((await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'k' } })).status).toBe(200);
    const world = (await (await player.fetch('/api/worlds', { method: 'POST', json: { world: willow() } })).json()) as { id: string };
    const created = await player.fetch(`/api/worlds/${world.id}/sessions`, { method: 'POST' });
    expect(created.status).toBe(201);
    const sessionId = ((await created.json()) as { session: { id: string } }).session.id;
    provider.enqueue({ kind: 'completion', content: 'Mina pours two cups.' });
    const sent = await player.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Do you remember the cafe by the station?' } });
    expect(sent.status).toBe(200);
    await sent.text();
    type Page = { messages: { id: string; role: string; content: string; status: string }[] };
    const onOld = (await (await player.fetch(`/api/sessions/${sessionId}`)).json()) as Page;
    expect(onOld.messages.map((m) => [m.role, m.status])).toEqual([['assistant', 'complete'], ['user', 'complete'], ['assistant', 'complete']]);
    expect(onOld.messages.at(-1)!.content).toContain('Mina pours two cups.');
    const oldReply = onOld.messages.at(-1)!.id;
    expect((await player.fetch(`/api/sessions/${sessionId}/messages/${oldReply}/prompt`)).status).toBe(200);

    // The same player (the login is in the database) on this tree's server: what the old one wrote reads, and a turn goes on.
    const same = new Browser(current.url);
    same.cookies = new Map(player.cookies);
    const onNew = (await (await same.fetch(`/api/sessions/${sessionId}`)).json()) as Page;
    expect(onNew.messages.map((m) => m.id)).toEqual(onOld.messages.map((m) => m.id));
    const oldPrompt = await same.fetch(`/api/sessions/${sessionId}/messages/${oldReply}/prompt`);
    expect(oldPrompt.status).toBe(200);
    expect(((await oldPrompt.json()) as { prompt: { historyCount: number } }).prompt.historyCount).toBe(2);
    provider.enqueue({ kind: 'completion', content: 'She smiles at the rain.' });
    const next = await same.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'And the umbrella?' } });
    expect(next.status).toBe(200);
    expect(await next.text()).not.toContain('event: error');

    // Back on the previous release: the history has the new turn; what was sent for a reply this
    // tree wrote is not there for it (a 404, not a failure); its next turn goes through.
    const later = (await (await player.fetch(`/api/sessions/${sessionId}`)).json()) as Page;
    expect(later.messages.map((m) => m.content.includes('She smiles at the rain.') || m.content.includes('And the umbrella?')).filter(Boolean)).toHaveLength(2);
    expect((await player.fetch(`/api/sessions/${sessionId}/messages/${later.messages.at(-1)!.id}/prompt`)).status).toBe(404);
    provider.enqueue({ kind: 'completion', content: 'The cafe is still there.' });
    const third = await player.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Shall we go?' } });
    expect(third.status).toBe(200);
    await third.text();
    expect(((await (await same.fetch(`/api/sessions/${sessionId}`)).json()) as Page).messages).toHaveLength(7);
  });
});
