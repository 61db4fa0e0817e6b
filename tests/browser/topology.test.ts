import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HOST_PAGE_HEADER_POLICY } from '@yumina/sandbox';
import pg from 'pg';
import type { Browser as Chromium, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres.ts';
import { startTopology, type Topology, type TopologyReady } from '../support/topology.ts';
import { Browser } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * The production topology on this machine (npm run start:topology), running the compiled output
 * (the global setup's `npm run build`): two container-mode replicas (`node
 * containers/api/dist/main.mjs`) on the real PostgreSQL and Redis, the five functions as processes
 * of their own loading their bundles and invoked through their deployed `handler` exports with
 * Function URL events, the static web build, behind one local router built from infra/routes.ts.
 */
const root = resolve(import.meta.dirname, '../..');

/** A turn through the router, read to its end: the replica that served it and how the stream ended. */
interface Turn {
  status: number;
  replica: string | null;
  ended: 'done' | 'error' | 'cut';
}

describe('the production topology behind one router', () => {
  let database: TestDatabase;
  let db: pg.Client;
  let provider: FakeOpenAi;
  let topology: Topology;
  let ready: TopologyReady;
  let chromium: Chromium;
  // The folder both replicas share (objects, and mail in its outbox/): sign-up links are read there.
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-topology-test-'));
  const outbox = join(dataDir, 'outbox');

  beforeAll(async () => {
    [database, provider, chromium] = await Promise.all([createTestDatabase({ migrated: true }), startFakeOpenAi({ apiKey: 'topology-key' }), launchBrowser()]);
    db = new pg.Client({ connectionString: database.url });
    await db.connect();
    topology = await startTopology({ databaseUrl: database.url, dataDir, outbox, env: { MAINTENANCE_PERIOD_MS: '1000', LEADER_LEASE_TTL_MS: '1500' } });
    ready = topology.ready;
  }, 180_000);

  afterAll(async () => {
    await topology?.stop();
    await chromium?.close();
    await provider?.close();
    rmSync(dataDir, { recursive: true, force: true });
    await db?.end();
    await database?.drop();
  });

  const runs = async () => (await db.query<{ replica_id: string }>('select replica_id from maintenance_runs order by period_start, id')).rows.map((r) => r.replica_id);
  const sample = JSON.parse(readFileSync(resolve(root, 'packages/world/samples/ashen-depths.json'), 'utf8'));
  /** An event stream's text as it arrives: `until` waits for a condition on everything read so far. */
  const readEvents = (res: Response) => {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    return {
      async until(done: (text: string) => boolean, timeoutMs = 15_000) {
        const deadline = Date.now() + timeoutMs;
        while (!done(text)) {
          if (Date.now() > deadline) throw new Error(`stream did not show it: ${text}`);
          const { value, done: ended } = await reader.read();
          if (ended) throw new Error(`stream ended: ${text}`);
          text += decoder.decode(value, { stream: true });
        }
      },
      close: () => void reader.cancel().catch(() => {}),
    };
  };
  const partnerFrame = (page: Page): Frame | undefined => page.frames().find((f) => f.url().includes('host=platform'));

  it('serves a session across replicas, the five functions and the web app; a partner handoff and update records go through the functions', async () => {
    const [one, two] = ready.replicas as [TopologyReady['replicas'][number], TopologyReady['replicas'][number]];
    expect(ready.functions.map((f) => f.function).sort()).toEqual(['jwks', 'partnerConfig', 'partnerToken', 'worldUpdates', 'worldValidate']);
    expect(new Set(ready.functions.map((f) => f.pid)).size).toBe(5); // one process each
    const email = `topology-${Date.now()}@example.com`;

    // Sign up, connect a provider and create a world through replica 1.
    const viaOne = new Browser(one.url);
    expect((await signUp({ url: one.url, outbox }, viaOne, { email, password: 'long enough pw', displayName: 'Mika' })).status).toBe(201);
    expect((await viaOne.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'topology-key' } })).ok).toBe(true);
    const worldId = ((await (await viaOne.fetch('/api/worlds', { method: 'POST', json: { world: sample } })).json()) as { id: string }).id;
    const sessionId = ((await (await viaOne.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;

    // A turn through replica 2, with the login made on replica 1.
    const viaTwo = new Browser(two.url);
    viaTwo.cookies = new Map(viaOne.cookies);
    provider.enqueue({ kind: 'completion', content: 'The ghoul lunges. [hp: -10] You hold.', chunks: 3 });
    const turn = await viaTwo.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I raise my torch' } });
    expect(turn.status).toBe(200);
    expect(await turn.text()).toMatch(/event: done/);
    const afterTurn = (await (await viaOne.fetch(`/api/sessions/${sessionId}`)).json()) as { messages: { role: string }[]; session: { state: { variables: { hp: number } } } };
    expect(afterTurn.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'assistant']); // the greeting, then the turn
    expect(afterTurn.session.state.variables.hp).toBe(90);

    // The static site's shell gets its framing headers at the edge (infra/frame-policy.ts), as from CloudFront.
    const shell = await fetch(`${ready.url}/play/${worldId}`);
    expect(shell.headers.get('content-security-policy')).toBe(HOST_PAGE_HEADER_POLICY);
    expect(shell.headers.get('x-frame-options')).toBe('SAMEORIGIN');

    // Container mode serves none of the functions' paths: what answers them below is a function.
    for (const replica of ready.replicas) {
      const direct = new Browser(replica.url);
      direct.cookies = new Map(viaOne.cookies);
      expect((await direct.fetch('/api/auth/jwks')).status).toBe(404);
      expect((await direct.fetch('/api/worlds/validate', { method: 'POST', json: {} })).status).toBe(404);
      expect((await direct.fetch('/api/partners/demo/config')).status).toBe(404);
      expect((await direct.fetch('/api/partners/demo/token', { method: 'POST' })).status).toBe(404);
      expect((await direct.fetch(`/api/worlds/${worldId}/updates`)).status).toBe(404);
    }

    // Update records through the world-updates function, announced through Redis to the live
    // overview stream the container holds.
    const author = new Browser(ready.url);
    author.cookies = new Map(viaOne.cookies);
    const overview = await author.fetch(`/api/worlds/${worldId}/updates/events`, { headers: { accept: 'text/event-stream' } });
    expect(overview.status).toBe(200);
    expect(overview.headers.get('x-topology-replica')).toMatch(/^replica-/); // the stream is the container's
    const events = readEvents(overview);
    await events.until((text) => text.includes('event: ready'));
    const created = await author.fetch(`/api/worlds/${worldId}/updates`, { method: 'POST', headers: { origin: ready.url }, json: { title: 'The lower halls open', isMajor: true, notifyPlayers: false } });
    expect(created.status, await created.clone().text()).toBe(201);
    expect(created.headers.get('x-topology-replica')).toBeNull(); // not a replica: the function
    await events.until((text) => text.includes('The lower halls open'));
    events.close();
    const history = (await (await author.fetch(`/api/worlds/${worldId}/updates`)).json()) as { updates: { title: string }[]; canEdit: boolean };
    expect(history).toMatchObject({ canEdit: true, updates: [{ title: 'The lower halls open' }] });
    expect((await fetch(`${ready.url}/api/worlds/${worldId}/updates`)).status).toBe(404); // a guest does not see an unpublished work

    // The router adds its proof and its own X-Forwarded-For entry for the viewer (issue 28 point 5):
    // a viewer's forged entry names nobody, in a function or on a replica; the login records the
    // address the router saw.
    const recorded = async () =>
      (await db.query<{ client_address: string }>('select s.client_address from login_sessions s join accounts a on a.id = s.account_id where a.email = $1 and s.ended_at is null', [email])).rows;
    expect((await author.fetch(`/api/worlds/${worldId}/updates`, { headers: { 'x-forwarded-for': '203.0.113.50' } })).status).toBe(200);
    expect(await recorded()).toEqual([{ client_address: '127.0.0.1' }]);
    const logins = (await (await author.fetch('/api/account/logins', { headers: { 'x-forwarded-for': '203.0.113.51' } })).json()) as { logins: { address: string; current: boolean }[] };
    expect(logins.logins).toEqual([expect.objectContaining({ address: '127.0.0.1', current: true })]);

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

    // The partner handoff: the landing page (the container's) frames the partner client; the page
    // gets the identity token from the partner-token function (the replicas refuse that path, above),
    // and the partner's own API verifies it against the key set of the jwks function before signing
    // the player in.
    await page.goto(`${ready.url}/demo?path=${encodeURIComponent('/search?q=100%25')}`);
    await expect.poll(() => Boolean(partnerFrame(page)), { timeout: 20_000 }).toBe(true);
    expect(new URL(partnerFrame(page)!.url()).searchParams.get('q')).toBe('100%');
    await expect
      .poll(async () => partnerFrame(page)?.locator('#player').getAttribute('data-state', { timeout: 2_000 }).catch(() => null), { timeout: 20_000 })
      .toBe('signed-in');
    expect(await partnerFrame(page)!.textContent('#player')).toBe('Mika');
    const config = await page.evaluate(async () => (await fetch('/api/partners/demo/config')).json() as Promise<{ audience: string }>);
    expect(config.audience).toBe('demo'); // the partner-config function

    // Game delivery is the container's; a deep link loads the app from the static site.
    const game = await page.goto(`${ready.url}/games/demo/`);
    expect(game!.status()).toBe(200);
    expect(game!.headers()['content-type']).toMatch(/text\/html/);
    const deep = await page.goto(`${ready.url}/play/${worldId}`);
    expect(deep!.status()).toBe(200);
    await expect.poll(() => page.locator('[data-testid="version"]').textContent(), { timeout: 20_000 }).toMatch(/container/);
    expect(new URL(page.url()).pathname).toBe(`/play/${worldId}`);
    await context.close();
  }, 240_000);

  it('SIGTERM to one replica while 20 players stream turns: its turns finish, new turns go to the other replica, nothing is lost or left streaming', async () => {
    const PLAYERS = 20;
    // Each reply streams for about 1.5 s, so the signal arrives while every first turn is in flight.
    provider.setHandler(() => ({ kind: 'completion', content: 'The lamp gutters and flares again. [gold: +1]', chunks: 15, chunkDelayMs: 100 }));
    const stamp = Date.now();
    const players = await Promise.all(
      Array.from({ length: PLAYERS }, async (_, i) => {
        const browser = new Browser(ready.url);
        const signup = await signUp({ url: ready.url, outbox }, browser, { email: `stream-${i}-${stamp}@example.com`, password: 'long enough pw' });
        expect(signup.status).toBe(201);
        expect((await browser.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'topology-key' } })).ok).toBe(true);
        const world = ((await (await browser.fetch('/api/worlds', { method: 'POST', json: { world: sample } })).json()) as { id: string }).id;
        const session = ((await (await browser.fetch(`/api/worlds/${world}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;
        return { browser, session };
      }),
    );
    // The maintenance leader is the one to stop: its lease must move too.
    await expect.poll(async () => (await runs()).length, { timeout: 15_000 }).toBeGreaterThan(0);
    const leaderId = (await runs()).at(-1)!;
    const victim = ready.replicas.find((r) => r.id === leaderId)!;
    const survivor = ready.replicas.find((r) => r.id !== leaderId)!;

    let signalled = false;
    let started = 0;
    let allStarted!: () => void;
    const streaming = new Promise<void>((r) => (allStarted = r));
    const sendTurn = async (player: (typeof players)[number], onStart?: () => void): Promise<Turn> => {
      const res = await player.browser.fetch(`/api/sessions/${player.session}/messages`, { method: 'POST', json: { content: 'I walk on.' } });
      const replica = res.headers.get('x-topology-replica');
      if (res.status !== 200 || !res.body) {
        onStart?.();
        return { status: res.status, replica, ended: 'cut' };
      }
      let text = '';
      const decoder = new TextDecoder();
      let first = true;
      try {
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          text += decoder.decode(chunk, { stream: true });
          if (first && text.includes('event: delta')) {
            first = false;
            onStart?.();
          }
        }
      } catch {
        // a cut stream is reported as such below
      }
      if (first) onStart?.();
      return { status: res.status, replica, ended: text.includes('event: done') ? 'done' : text.includes('event: error') ? 'error' : 'cut' };
    };
    // Every player streams a turn, and sends the next as soon as the first has ended.
    const rounds = players.map(async (player) => {
      const firstTurn = await sendTurn(player, () => {
        if (++started === PLAYERS) allStarted();
      });
      const afterSignal = signalled;
      const secondTurn = await sendTurn(player);
      return { firstTurn, secondTurn, afterSignal };
    });
    await streaming;
    process.kill(victim.pid, 'SIGTERM');
    signalled = true;
    const results = await Promise.all(rounds);

    const first = results.map((r) => r.firstTurn);
    // Both replicas had turns in flight when the signal came.
    expect(first.filter((t) => t.replica === victim.id).length).toBeGreaterThan(0);
    expect(first.filter((t) => t.replica === survivor.id).length).toBeGreaterThan(0);
    // Turns in flight on the stopped replica finished (or failed cleanly, with an error event): none was cut.
    for (const t of first) expect(t.status).toBe(200);
    expect(first.filter((t) => t.ended === 'cut')).toEqual([]);
    // Every turn sent after the signal went to the other replica and completed.
    for (const r of results) {
      expect(r.afterSignal).toBe(true);
      expect(r.secondTurn).toEqual({ status: 200, replica: survivor.id, ended: 'done' });
    }
    // The stopped replica drained and exited 0.
    await expect.poll(() => topology.output().includes(`${victim.id} exited (0)`), { timeout: 30_000 }).toBe(true);

    // Nothing lost, nothing left streaming: each session holds both turns, every reply settled.
    const sessions = players.map((p) => p.session);
    const { rows } = await db.query<{ session_id: string; role: string; status: string; error_code: string | null }>(
      'select session_id, role, status, error_code from chat_messages where session_id = any($1) order by session_id, position',
      [sessions],
    );
    expect(rows.filter((r) => r.status === 'streaming')).toEqual([]);
    for (const [i, session] of sessions.entries()) {
      const messages = rows.filter((r) => r.session_id === session);
      // a first turn that failed kept no reply (issue 30 A2): its failure is on the player's message
      const done = first[i]!.ended === 'done';
      // the world's greeting first
      expect(messages.map((m) => m.role), session).toEqual(done ? ['assistant', 'user', 'assistant', 'user', 'assistant'] : ['assistant', 'user', 'user', 'assistant']);
      expect(messages.at(-1)!.status).toBe('complete');
      expect(messages[1]!.error_code !== null).toBe(!done);
    }
    // The leader lease moves to the survivor, which now runs the scheduled maintenance.
    await expect.poll(async () => (await runs()).slice(-1)[0], { timeout: 15_000, interval: 100 }).toBe(survivor.id);
  }, 240_000);
});
