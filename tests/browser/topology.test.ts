import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { HOST_PAGE_HEADER_POLICY } from '@yumina/sandbox';
import pg from 'pg';
import type { Browser as Chromium, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { freePort, sharedRedisUrl, testPrefix } from '../support/redis.ts';
import { Browser } from '../support/server.ts';

/**
 * The production topology on this machine (npm run start:topology): two container-mode replicas on
 * the real PostgreSQL and Redis, the functions through their Lambda handlers with Function URL
 * events, the static web build, behind one local router built from infra/routes.ts.
 */
const root = resolve(import.meta.dirname, '../..');

interface Ready {
  url: string;
  replicas: { id: string; url: string; pid: number }[];
  partner: string;
}

describe('the production topology behind one router', () => {
  let database: TestDatabase;
  let db: pg.Client;
  let provider: FakeOpenAi;
  let topology: ChildProcess;
  let ready: Ready;
  let chromium: Chromium;
  let output = '';

  beforeAll(async () => {
    [database, provider, chromium] = await Promise.all([createTestDatabase(), startFakeOpenAi({ apiKey: 'topology-key' }), launchBrowser()]);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    topology = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'scripts/topology.ts')], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        REDIS_URL: sharedRedisUrl,
        REDIS_KEY_PREFIX: testPrefix(),
        TOPOLOGY_PORT: String(await freePort()),
        MAINTENANCE_PERIOD_MS: '1000',
        LEADER_LEASE_TTL_MS: '1500',
        // The fake provider listens on loopback, which container mode refuses by default (docs/SECURITY.md).
        AI_PRIVATE_NETWORK_ACCESS: 'allow',
        LOG_LEVEL: 'error',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    ready = await new Promise<Ready>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`topology not ready: ${output}`)), 150_000);
      const read = (d: Buffer) => {
        output += d.toString();
        const line = output.split('\n').find((l) => l.includes('"topology.ready"'));
        if (line) {
          clearTimeout(timer);
          done(JSON.parse(line) as Ready);
        }
      };
      topology.stdout!.on('data', read);
      topology.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      topology.on('exit', (code) => fail(new Error(`topology exited (${code}): ${output}`)));
    });
  }, 180_000);

  afterAll(async () => {
    if (topology && topology.exitCode === null) {
      const exited = new Promise((r) => topology.once('exit', r));
      topology.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      for (const r of ready?.replicas ?? []) {
        try {
          process.kill(r.pid, 'SIGKILL');
        } catch {}
      }
    }
    await chromium?.close();
    await provider?.close();
    await db?.end();
    await database?.drop();
  });

  const runs = async () => (await db.query<{ replica_id: string }>('select replica_id from maintenance_runs order by period_start')).rows.map((r) => r.replica_id);
  const partnerFrame = (page: Page): Frame | undefined => page.frames().find((f) => f.url().includes('host=platform'));

  it('serves a session across replicas, functions and the web app; a killed replica’s traffic and leader lease move to the survivor', async () => {
    const [one, two] = ready.replicas as [Ready['replicas'][number], Ready['replicas'][number]];
    const email = `topology-${Date.now()}@example.com`;

    // Sign up, connect a provider and create a world through replica 1.
    const viaOne = new Browser(one.url);
    expect((await viaOne.fetch('/api/auth/signup', { method: 'POST', json: { email, password: 'long enough pw', displayName: 'Mika' } })).status).toBe(201);
    expect((await viaOne.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'topology-key' } })).ok).toBe(true);
    const world = JSON.parse(readFileSync(resolve(root, 'packages/world/samples/ashen-depths.json'), 'utf8'));
    const worldId = ((await (await viaOne.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
    const sessionId = ((await (await viaOne.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;

    // A turn through replica 2, with the login made on replica 1.
    const viaTwo = new Browser(two.url);
    viaTwo.cookies = new Map(viaOne.cookies);
    provider.enqueue({ kind: 'completion', content: 'The ghoul lunges. [hp: -10] You hold.', chunks: 3 });
    const turn = await viaTwo.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I raise my torch' } });
    expect(turn.status).toBe(200);
    expect(await turn.text()).toMatch(/event: done/);
    const afterTurn = (await (await viaOne.fetch(`/api/sessions/${sessionId}`)).json()) as { messages: { role: string }[]; session: { state: { variables: { hp: number } } } };
    expect(afterTurn.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(afterTurn.session.state.variables.hp).toBe(90);

    // The static site's shell gets its framing headers at the edge (infra/frame-policy.ts), as from CloudFront.
    const shell = await fetch(`${ready.url}/play/${worldId}`);
    expect(shell.headers.get('content-security-policy')).toBe(HOST_PAGE_HEADER_POLICY);
    expect(shell.headers.get('x-frame-options')).toBe('SAMEORIGIN');

    // Chromium through the router only.
    const context = await chromium.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(40_000);
    await page.goto(`${ready.url}/`);
    const login = await page.evaluate(
      async (email) =>
        (await fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password: 'long enough pw' }) })).status,
      email,
    );
    expect(login).toBe(200);
    await expect.poll(() => page.locator('[data-testid="version"]').textContent(), { timeout: 20_000 }).toMatch(/container/);

    // The key set, answered by the Lambda handler (a function path of the route table).
    const jwks = await page.evaluate(async () => {
      const res = await fetch('/api/auth/jwks');
      return { status: res.status, body: (await res.json()) as { keys: { kid: string; d?: string }[] } };
    });
    expect(jwks.status).toBe(200);
    expect(jwks.body.keys.length).toBeGreaterThanOrEqual(1);
    expect(jwks.body.keys.every((k) => k.d === undefined)).toBe(true);
    const validate = await page.evaluate(async () => {
      const res = await fetch('/api/worlds/validate', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ world: {} }) });
      return { status: res.status, body: (await res.json()) as { valid: boolean } };
    });
    expect(validate).toMatchObject({ status: 422, body: { valid: false } }); // the validator's own answer for an invalid world
    // Container mode does not serve the function paths: those answers came from the Lambda handlers.
    for (const replica of ready.replicas) {
      expect((await fetch(`${replica.url}/api/auth/jwks`)).status).toBe(404);
      expect((await fetch(`${replica.url}/api/worlds/validate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(404);
    }

    // The partner landing page (the container's) frames the partner client, which gets the identity
    // token and has its own API verify it through /api/auth/jwks (the Lambda) before signing the player in.
    await page.goto(`${ready.url}/demo?path=${encodeURIComponent('/search?q=100%25')}`);
    await expect.poll(() => Boolean(partnerFrame(page)), { timeout: 20_000 }).toBe(true);
    expect(new URL(partnerFrame(page)!.url()).searchParams.get('q')).toBe('100%');
    await expect
      .poll(async () => partnerFrame(page)?.locator('#player').getAttribute('data-state', { timeout: 2_000 }).catch(() => null), { timeout: 20_000 })
      .toBe('signed-in');
    expect(await partnerFrame(page)!.textContent('#player')).toBe('Mika');

    // Game delivery is the container's; a deep link loads the app from the static site.
    const game = await page.goto(`${ready.url}/games/demo/`);
    expect(game!.status()).toBe(200);
    expect(game!.headers()['content-type']).toMatch(/text\/html/);
    const deep = await page.goto(`${ready.url}/play/${worldId}`);
    expect(deep!.status()).toBe(200);
    await expect.poll(() => page.locator('[data-testid="version"]').textContent(), { timeout: 20_000 }).toMatch(/container/);
    expect(new URL(page.url()).pathname).toBe(`/play/${worldId}`);

    // Kill the maintenance leader without a goodbye, mid-session.
    await expect.poll(async () => (await runs()).length, { timeout: 15_000 }).toBeGreaterThan(0);
    const leaderId = (await runs()).at(-1)!;
    const dead = ready.replicas.find((r) => r.id === leaderId)!;
    const survivor = ready.replicas.find((r) => r.id !== leaderId)!;
    process.kill(dead.pid, 'SIGKILL');

    // The same browser session goes on through the router: every request now reaches the survivor.
    for (let i = 0; i < 4; i++) {
      const version = await page.evaluate(async () => (await fetch('/api/auth/session')).json() as Promise<{ account: { displayName: string } | null }>);
      expect(version.account?.displayName).toBe('Mika');
    }
    provider.enqueue({ kind: 'completion', content: 'The ghoul falls. [hp: -5]', chunks: 2 });
    const second = await page.evaluate(async (id) => {
      const res = await fetch(`/api/sessions/${id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'I strike' }) });
      return { status: res.status, text: await res.text() };
    }, sessionId);
    expect(second.status).toBe(200);
    expect(second.text).toMatch(/event: done/);
    const afterKill = (await (await new Browser(survivor.url).fetch(`/api/sessions/${sessionId}`, { headers: { cookie: viaOne.cookieHeader } })).json()) as { messages: unknown[]; session: { state: { variables: { hp: number } } } };
    expect(afterKill.messages).toHaveLength(4);
    expect(afterKill.session.state.variables.hp).toBe(85);

    // The leader lease moves to the survivor, which now runs the scheduled maintenance.
    await expect.poll(async () => (await runs()).includes(survivor.id), { timeout: 15_000, interval: 100 }).toBe(true);
    await context.close();
  }, 240_000);
});
