import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { readdirSync, readFileSync } from 'node:fs';
import { completeChat } from '@yumina/ai';
import { grantCredits } from '@yumina/billing';
import type { CompanionContext } from '@yumina/companion';
import { ConfigError, loadConfig } from '@yumina/config';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { observer } from '../../../../tests/support/postgres.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { meteringFor } from '../ai/metering.ts';
import { buildApp } from '../app.ts';
import { mutateNotebook, readNotebook } from './notebook-store.ts';
import { companionDisabledByConfig } from './routes.ts';
import { provisionNotebookTable, provisionState } from './table.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const context: CompanionContext = {
  mode: 'adventure',
  level: 12,
  cycle: 1,
  locale: 'en',
  sun: 150,
  wave: { next: 2, total: 6, finalWaveSpawned: false },
  selectedPlants: ['Peashooter', 'Sunflower'],
  lawn: { rows: 5, fogFromColumn: null, plants: [{ name: 'Peashooter', row: 1, column: 1 }], zombies: [{ name: 'Zombie', row: 1, column: 7 }] },
  tin: { phase: 'none' },
  nativeLoss: false,
};

const id = () => randomBytes(6).toString('base64url');

/** The platform's official key: configured on the same fake, so any fallback to it would be recorded there. */
const OFFICIAL_KEY = 'sk-official-platform-key-0123456789';

describe('GAME_COMPANION_DISABLED through the config loader', () => {
  it('1 and true set companion.disabled; 0, false, empty and unset leave it on; anything else is a configuration error', () => {
    for (const [value, disabled] of [
      ['1', true],
      ['true', true],
      ['0', false],
      ['false', false],
      ['', false],
      [undefined, false],
    ] as const) {
      const config = loadConfig({ GAME_COMPANION_DISABLED: value });
      expect(config.companion.disabled, `GAME_COMPANION_DISABLED=${String(value)}`).toBe(disabled);
      // The routes read the flag from exactly this place.
      expect(companionDisabledByConfig(config), `GAME_COMPANION_DISABLED=${String(value)}`).toBe(disabled);
    }
    let error: unknown;
    try {
      loadConfig({ GAME_COMPANION_DISABLED: 'yes' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).variable).toBe('GAME_COMPANION_DISABLED');
  });
});

describe('companion routes', () => {
  let server: TestServer;
  let fake: FakeOpenAi;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    // The official provider points at the same fake (which accepts any key): a fallback would show up there.
    server = await startTestServer({ OFFICIAL_AI_BASE_URL: fake.url, OFFICIAL_AI_API_KEY: OFFICIAL_KEY, OFFICIAL_AI_MODEL: 'official-model' });
    // Tests below read the table directly; the post-listen provisioning step creates it.
    expect(await provisionNotebookTable(server.ctx)).toBe(true);
  });
  afterAll(async () => {
    await fake?.close();
    await server?.stop();
  });
  beforeEach(() => {
    fake.reset();
    fake.setHandler((body) => {
      const messages = body.messages as { role: string; content: string }[];
      const last = messages.at(-1)!.content;
      return fakeReplies.completion(JSON.stringify({ reply: `You said ${last.length} characters.`, quote: last.split('|')[1] }));
    });
  });

  /** A signed-up player; with `provider` a private AI connection pointing at the fake. */
  async function player(provider: 'enabled' | 'disabled' | 'none' = 'enabled') {
    const b = new Browser(server.url);
    const res = await signUp(server, b, { email: `p-${id()}@example.com`, password: 'long enough pw', displayName: 'Player' });
    expect(res.status).toBeLessThan(300);
    if (provider !== 'none') {
      const saved = await b.fetch('/api/settings/ai', {
        method: 'PUT',
        json: { baseUrl: fake.url, defaultModel: 'companion-model', apiKey: 'sk-test-abcdefgh12345678', privateEnabled: provider === 'enabled' },
      });
      expect(saved.status).toBe(200);
    }
    const config = (await (await b.fetch('/api/game/npc/companion/config')).json()) as { accountId: string };
    const run = id();
    const board = id();
    const generate = (message: string, extra: Record<string, unknown> = {}) =>
      b.fetch('/api/game/npc/companion', {
        method: 'POST',
        json: { accountId: config.accountId, requestId: id(), runId: run, boardId: board, message, context, ...extra },
      });
    const notebook = async () => ((await (await b.fetch('/api/game/npc/companion/notebook')).json()) as { notebook: Notebook }).notebook;
    const mutate = (base: { revision: number; epoch: number }, mutation: unknown) =>
      b.fetch('/api/game/npc/companion/notebook', { method: 'POST', json: { base, mutation } });
    return { b, accountId: config.accountId, run, board, generate, notebook, mutate };
  }

  interface Notebook {
    revision: number;
    epoch: number;
    turns: { role: string; text: string }[];
    notes: { id: string; text: string }[];
    statements: { text: string }[];
    milestones: { key: string; kind: string }[];
  }

  it('config: the account id, enabled, the chosen model and limits; adventure needs a login', async () => {
    const p = await player();
    const config = (await (await p.b.fetch('/api/game/npc/companion/config')).json()) as Record<string, unknown>;
    expect(config).toMatchObject({
      accountId: p.accountId,
      enabled: true,
      model: 'companion-model',
      provider: { configured: true, usable: true },
      settingsPath: '/app/settings#ai-config',
      limits: { generationBodyMaxBytes: 24 * 1024, notebookBodyMaxBytes: 12 * 1024, generationsPerMinute: 8 },
    });
    expect(JSON.stringify(config)).not.toContain('sk-test');
    const guest = new Browser(server.url);
    const res = await guest.fetch('/api/game/npc/companion/config');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    expect((await guest.fetch('/api/game/npc/companion', { method: 'POST', json: {} })).status).toBe(401);
  });

  it('preferences: visits and proactive comments are stored per account, separately, and follow the player to another device', async () => {
    const email = `prefs-${id()}@example.com`;
    const b = new Browser(server.url);
    expect((await signUp(server, b, { email, password: 'long enough pw' })).status).toBeLessThan(300);
    const prefs = async (browser: Browser) =>
      ((await (await browser.fetch('/api/game/npc/companion/config')).json()) as { preferences: Record<string, boolean> }).preferences;
    expect(await prefs(b)).toEqual({ occasionalVisits: true, proactiveComments: false });
    const off = await b.fetch('/api/game/npc/companion/preferences', { method: 'PUT', json: { occasionalVisits: false } });
    expect(off.status).toBe(200);
    expect(((await off.json()) as { preferences: unknown }).preferences).toEqual({ occasionalVisits: false, proactiveComments: false });
    // Another device: a new session of the same account.
    const other = new Browser(server.url);
    expect((await other.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'long enough pw' } })).status).toBeLessThan(300);
    expect(await prefs(other)).toEqual({ occasionalVisits: false, proactiveComments: false });
    // Proactive comments are a separate switch: turning them on leaves visits off, and back.
    expect((await other.fetch('/api/game/npc/companion/preferences', { method: 'PUT', json: { proactiveComments: true } })).status).toBe(200);
    expect(await prefs(b)).toEqual({ occasionalVisits: false, proactiveComments: true });
    expect((await b.fetch('/api/game/npc/companion/preferences', { method: 'PUT', json: { occasionalVisits: true } })).status).toBe(200);
    expect(await prefs(other)).toEqual({ occasionalVisits: true, proactiveComments: true });
    // Another account is not affected; bad bodies and guests are refused with nothing written.
    const stranger = await player('none');
    expect(await prefs(stranger.b)).toEqual({ occasionalVisits: true, proactiveComments: false });
    for (const json of [{}, { occasionalVisits: 'no' }, { occasionalVisits: false, extra: 1 }]) {
      const bad = await b.fetch('/api/game/npc/companion/preferences', { method: 'PUT', json });
      expect(bad.status, JSON.stringify(json)).toBe(400);
      expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    }
    expect(await prefs(b)).toEqual({ occasionalVisits: true, proactiveComments: true });
    expect((await new Browser(server.url).fetch('/api/game/npc/companion/preferences', { method: 'PUT', json: { occasionalVisits: false } })).status).toBe(401);
  });

  it('generates one reply through the private connection and remembers the turns', async () => {
    const p = await player();
    const res = await p.generate('Hello there, |I love sunflowers|');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { reply: string; remembered: string | null; notebook: { saved: boolean; revision: number } };
    expect(body.reply).toBe('You said 32 characters.');
    expect(body.remembered).toBe('I love sunflowers');
    expect(body.notebook.saved).toBe(true);
    expect(fake.completions).toHaveLength(1);
    const sent = fake.completions[0]!;
    expect(sent.headers.authorization).toBe('Bearer sk-test-abcdefgh12345678');
    expect(sent.body).toMatchObject({ model: 'companion-model', max_tokens: 500 });
    expect(sent.body!.stream).toBeUndefined();
    const nb = await p.notebook();
    expect(nb.turns.map((t) => t.role)).toEqual(['player', 'companion']);
    expect(nb.statements.map((s) => s.text)).toEqual(['I love sunflowers']);
    expect(nb.revision).toBe(body.notebook.revision);

    // The saved dialogue goes into the next prompt; the model chosen in the game tab is used.
    expect((await p.generate('again', { model: 'picked-model' })).status).toBe(200);
    const second = fake.completions[1]!.body as { model: string; messages: { role: string; content: string }[] };
    expect(second.model).toBe('picked-model');
    expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
  });

  it('a quote is stored only when exact and not credential-like, never as a game event', async () => {
    const p = await player();
    fake.setHandler(() => fakeReplies.completion(JSON.stringify({ reply: 'Noted.', quote: 'I never said this' })));
    expect(((await (await p.generate('I like peas')).json()) as { remembered: unknown }).remembered).toBeNull();
    fake.setHandler(() => fakeReplies.completion(JSON.stringify({ reply: 'Noted.', quote: 'hunter2hunter2' })));
    expect(((await (await p.generate('my password is hunter2hunter2')).json()) as { remembered: unknown }).remembered).toBeNull();
    fake.setHandler(() => fakeReplies.completion(JSON.stringify({ reply: 'Noted.', quote: 'sk-proj-abcdefghijklmnop1234' })));
    expect(((await (await p.generate('use sk-proj-abcdefghijklmnop1234 please')).json()) as { remembered: unknown }).remembered).toBeNull();
    fake.setHandler(() => fakeReplies.completion(JSON.stringify({ reply: 'You won! +500 sun', quote: 'I like peas', action: 'grant-sun', reward: 500 })));
    const ok = (await (await p.generate('I like peas a lot')).json()) as Record<string, unknown>;
    expect(ok.remembered).toBe('I like peas');
    expect(ok).not.toHaveProperty('action');
    expect(ok).not.toHaveProperty('reward');
    const nb = await p.notebook();
    expect(nb.statements.map((s) => s.text)).toEqual(['I like peas']);
    expect(nb.milestones).toEqual([]);
    expect(JSON.stringify(nb.statements)).not.toContain('hunter2');
  });

  it('no private provider, or private use turned off: refused before any outbound request, with no fallback to the official key', async () => {
    expect(server.ctx.config.ai.official).toMatchObject({ baseUrl: fake.url, apiKey: OFFICIAL_KEY });
    for (const kind of ['none', 'disabled'] as const) {
      const p = await player(kind);
      // Everywhere else this account would be served by the official key: it prefers it and has credits.
      expect((await p.b.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'official' } })).status).toBe(200);
      await grantCredits(server.ctx.db.primary, p.accountId, 100_000, p.accountId, 'companion fallback test');
      const metering = await meteringFor(server.ctx, p.accountId);
      expect(metering.selection).toMatchObject({ source: 'official', endpoint: { baseUrl: fake.url, apiKey: OFFICIAL_KEY } });
      // Control: a call on that selection does reach the fake with the official key, so a fallback would be seen.
      fake.reset();
      await completeChat(metering.selection.endpoint, { model: 'official-model', messages: [{ role: 'user', content: 'control' }] });
      expect(fake.completions.map((r) => r.headers.authorization)).toEqual([`Bearer ${OFFICIAL_KEY}`]);
      fake.reset();

      const config = (await (await p.b.fetch('/api/game/npc/companion/config')).json()) as { enabled: boolean; provider: Record<string, unknown> };
      expect(config.enabled).toBe(true);
      expect(config.provider).toMatchObject({ configured: kind === 'disabled', usable: false });
      const res = await p.generate('hello');
      expect(res.status, kind).toBe(409);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PRIVATE_PROVIDER_REQUIRED');
      // Nothing was remembered for the refused request.
      expect((await p.notebook()).turns).toEqual([]);
      await new Promise((r) => setTimeout(r, 100));
      expect(fake.requests, kind).toHaveLength(0);
    }
  });

  it('contract: the 20 s deadline ends a hanging provider call, the provider is called once (no automatic retry), and no database transaction is open while waiting', async () => {
    const p = await player();
    const watcher = await observer(server.database.url);
    try {
      const openTransactions = async () =>
        (
          await watcher.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state like 'idle in transaction%'`,
          )
        ).rows[0]!.n;
      fake.enqueue({ kind: 'hang' });
      const started = Date.now();
      const pending = p.generate('are you there?');
      await expect.poll(() => fake.completions.length, { timeout: 10_000 }).toBe(1);
      // While the model is being waited for: no transaction held open by the server (sampled a few times).
      const samples: number[] = [];
      for (let i = 0; i < 6; i++) {
        samples.push(await openTransactions());
        await new Promise((r) => setTimeout(r, 250));
      }
      expect(samples).toEqual([0, 0, 0, 0, 0, 0]);
      const res = await pending;
      const elapsed = Date.now() - started;
      expect(res.status).toBe(504);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('AI_PROVIDER_TIMEOUT');
      // Timers never fire early; the upper bound only guards against "no deadline at all".
      expect(elapsed).toBeGreaterThanOrEqual(19_500);
      expect(elapsed).toBeLessThan(45_000);
      await expect.poll(() => fake.completions[0]!.aborted).toBe(true);
      await new Promise((r) => setTimeout(r, 300));
      expect(fake.completions).toHaveLength(1);
      expect((await p.notebook()).turns).toEqual([]);
    } finally {
      await watcher.end();
    }

    // A failing provider (5xx, 429) is called once: the error is answered, never retried.
    for (const failure of [fakeReplies.serverError(), fakeReplies.rateLimited()]) {
      fake.reset();
      fake.enqueue(failure);
      const res = await p.generate('try once');
      expect([502, 429]).toContain(res.status);
      expect(((await res.json()) as { error: { code: string } }).error.code).toMatch(/^AI_PROVIDER_/);
      await new Promise((r) => setTimeout(r, 300));
      expect(fake.completions).toHaveLength(1);
    }
  }, 60_000);

  it('a mismatched account id and a body that is not strict adventure context are refused', async () => {
    const p = await player();
    const other = await player();
    const res = await p.b.fetch('/api/game/npc/companion', {
      method: 'POST',
      json: { accountId: other.accountId, requestId: id(), runId: id(), boardId: id(), message: 'hi', context },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('ACCOUNT_MISMATCH');
    expect((await p.generate('hi', { context: { ...context, mode: 'versus' } })).status).toBe(400);
    expect((await p.generate('hi', { context: { ...context, extra: 1 } })).status).toBe(400);
    expect((await p.generate('hi', { unknownField: true })).status).toBe(400);
    expect(fake.requests).toHaveLength(0);
  });

  it('stale request, run and board ids are refused', async () => {
    const p = await player();
    const send = (ids: { requestId: string; runId: string; boardId: string }) =>
      p.b.fetch('/api/game/npc/companion', { method: 'POST', json: { accountId: p.accountId, message: 'hi', context, ...ids } });
    const first = { requestId: id(), runId: 'run-1', boardId: 'board-1' };
    expect((await send(first)).status).toBe(200);
    // The same request id again (a replay or a double send).
    const again = await send(first);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe('STALE_REQUEST');
    // A new board replaces board-1: board-1 is stale from then on.
    expect((await send({ requestId: id(), runId: 'run-1', boardId: 'board-2' })).status).toBe(200);
    expect((await send({ requestId: id(), runId: 'run-1', boardId: 'board-1' })).status).toBe(409);
    // A new run replaces run-1: any board of run-1 is stale.
    expect((await send({ requestId: id(), runId: 'run-2', boardId: 'board-9' })).status).toBe(200);
    expect((await send({ requestId: id(), runId: 'run-1', boardId: 'board-new' })).status).toBe(409);
    expect(fake.completions).toHaveLength(3);
  });

  it('the 9th generation in a minute is refused', async () => {
    const p = await player();
    for (let i = 0; i < 8; i++) expect((await p.generate(`message ${i}`)).status).toBe(200);
    const ninth = await p.generate('one too many');
    expect(ninth.status).toBe(429);
    expect(((await ninth.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    expect(ninth.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(fake.completions).toHaveLength(8);
    // Another account is not affected.
    expect((await (await player()).generate('hello')).status).toBe(200);
  });

  it('a second concurrent generation is refused; cancelling the first aborts the provider call', async () => {
    const p = await player();
    fake.enqueue({ kind: 'hang' });
    const abort = new AbortController();
    const first = p.b
      .fetch('/api/game/npc/companion', {
        method: 'POST',
        json: { accountId: p.accountId, requestId: id(), runId: p.run, boardId: p.board, message: 'slow one', context },
        signal: abort.signal,
      })
      .catch((err: Error) => err);
    await expect.poll(() => fake.completions.length).toBe(1);
    const second = await p.generate('meanwhile');
    expect(second.status).toBe(429);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('GENERATION_ACTIVE');
    abort.abort();
    expect(await first).toBeInstanceOf(Error);
    await expect.poll(() => fake.completions[0]!.aborted).toBe(true);
    // The slot is free again once the cancelled call ended; nothing was remembered for it.
    await expect.poll(async () => (await p.generate('after')).status).toBe(200);
    expect((await p.notebook()).turns.map((t) => t.text)).toEqual(['after', 'You said 5 characters.']);
  });

  it('body limits: 24 KiB for generation, 12 KiB for the notebook', async () => {
    const p = await player();
    const big = (bytes: number) => ({ accountId: p.accountId, requestId: id(), runId: p.run, boardId: p.board, message: 'hi', context, pad: 'x'.repeat(bytes) });
    const tooBig = await p.b.fetch('/api/game/npc/companion', { method: 'POST', json: big(24 * 1024) });
    expect(tooBig.status).toBe(413);
    expect(((await tooBig.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE');
    // Just under the limit: read, then refused by the strict schema (not by size).
    const justUnder = await p.b.fetch('/api/game/npc/companion', { method: 'POST', json: big(20 * 1024) });
    expect(justUnder.status).toBe(400);
    const nbBig = await p.mutate({ revision: 0, epoch: 0 }, { op: 'note-add', id: 'n1', text: 'x'.repeat(12 * 1024) });
    expect(nbBig.status).toBe(413);
    const nbUnder = await p.b.fetch('/api/game/npc/companion/notebook', {
      method: 'POST',
      json: { base: { revision: 0, epoch: 0 }, mutation: { op: 'note-add', id: 'n1', text: 'x'.repeat(400) }, pad: 'y'.repeat(10 * 1024) },
    });
    expect(nbUnder.status).toBe(400);
    expect(fake.requests).toHaveLength(0);
    expect((await p.notebook()).notes).toEqual([]);
  });

  it('GAME_COMPANION_DISABLED turns the companion off while logged-in adventure access stays', async () => {
    const p = await player();
    const app = await buildApp({ ...server.ctx, config: { ...server.ctx.config, companion: { disabled: true } } as typeof server.ctx.config }, { web: false });
    try {
      const headers = { cookie: p.b.cookieHeader, 'content-type': 'application/json' };
      const config = await app.inject({ method: 'GET', url: '/api/game/npc/companion/config', headers });
      expect(config.statusCode).toBe(200);
      expect(config.json()).toMatchObject({ accountId: p.accountId, enabled: false });
      const gen = await app.inject({
        method: 'POST',
        url: '/api/game/npc/companion',
        headers,
        payload: { accountId: p.accountId, requestId: id(), runId: id(), boardId: id(), message: 'hi', context },
      });
      expect(gen.statusCode).toBe(403);
      expect(gen.json().error.code).toBe('COMPANION_DISABLED');
      // Adventure saves still work for the logged-in player.
      const save = await app.inject({ method: 'GET', url: '/api/games/demo/saves/adventure', headers });
      expect(save.statusCode).toBe(404);
      expect(save.json().error.code).toBe('NO_SAVE');
    } finally {
      await app.close();
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('GAME_COMPANION_DISABLED=1 in the environment of a real server turns generation off; a server without it answers', async () => {
    const off = await startTestServer({ GAME_COMPANION_DISABLED: '1', OFFICIAL_AI_BASE_URL: fake.url, OFFICIAL_AI_API_KEY: OFFICIAL_KEY });
    try {
      expect(off.ctx.config.companion.disabled).toBe(true);
      const b = new Browser(off.url);
      expect((await signUp(off, b, { email: `off-${id()}@example.com`, password: 'long enough pw' })).status).toBeLessThan(300);
      const saved = await b.fetch('/api/settings/ai', {
        method: 'PUT',
        json: { baseUrl: fake.url, defaultModel: 'companion-model', apiKey: 'sk-test-abcdefgh12345678', privateEnabled: true },
      });
      expect(saved.status).toBe(200);
      const config = (await (await b.fetch('/api/game/npc/companion/config')).json()) as { accountId: string; enabled: boolean; provider: { usable: boolean } };
      expect(config).toMatchObject({ enabled: false, provider: { usable: true } });
      const gen = await b.fetch('/api/game/npc/companion', {
        method: 'POST',
        json: { accountId: config.accountId, requestId: id(), runId: id(), boardId: id(), message: 'hi', context },
      });
      expect(gen.status).toBe(403);
      expect(((await gen.json()) as { error: { code: string } }).error.code).toBe('COMPANION_DISABLED');
      // Logged-in adventure access stays: the save route answers for the account (no save yet), a guest is refused.
      const save = await b.fetch('/api/games/demo/saves/adventure');
      expect(save.status).toBe(404);
      expect(((await save.json()) as { error: { code: string } }).error.code).toBe('NO_SAVE');
      expect((await new Browser(off.url).fetch('/api/games/demo/saves/adventure')).status).toBe(401);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await off.stop();
    }
    // The same steps on the suite's server (no GAME_COMPANION_DISABLED) reach the provider.
    const p = await player();
    expect((await p.generate('hi')).status).toBe(200);
    expect(fake.completions).toHaveLength(1);
  });

  it('notebook: of two writers on one revision the stale one is refused with the current revision, nothing of it stored; it re-reads and re-applies', async () => {
    const p = await player();
    const start = await p.notebook();
    const base = { revision: start.revision, epoch: start.epoch };
    // Two tabs with the same base both add a note: one wins, the other is refused whole.
    const [a, b] = await Promise.all([
      p.mutate(base, { op: 'note-add', id: 'tab-a', text: 'Buy the tin next time' }),
      p.mutate(base, { op: 'note-add', id: 'tab-b', text: 'Wall-nuts on row 3' }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const [won, lost] = a.status === 200 ? ['tab-a', 'tab-b'] : ['tab-b', 'tab-a'];
    const refusal = (await (a.status === 409 ? a : b).json()) as { error: { code: string }; reason: string; revision: number; notebook: Notebook };
    expect(refusal.error.code).toBe('NOTEBOOK_CONFLICT');
    expect(refusal.reason).toBe('revision');
    expect(refusal.revision).toBe(base.revision + 1);
    expect(refusal.notebook.notes.map((n) => n.id)).toEqual([won]);
    const afterOne = await p.notebook();
    expect(afterOne.notes.map((n) => n.id)).toEqual([won]);
    expect(afterOne.revision).toBe(base.revision + 1);
    // An additive write on an outdated revision (here: a milestone) is not merged either.
    const staleRecord = await p.mutate(base, { op: 'record', milestones: [{ key: 'visit:stale', kind: 'visit', level: 6, cycle: 1 }] });
    expect(staleRecord.status).toBe(409);
    expect((await p.notebook()).milestones).toEqual([]);
    // The refused tab re-reads (the refusal carried the revision) and re-applies: now it is stored.
    const retried = await p.mutate({ revision: refusal.revision, epoch: refusal.notebook.epoch }, { op: 'note-add', id: lost, text: 'again' });
    expect(retried.status).toBe(200);
    const both = await p.notebook();
    expect(both.notes.map((n) => n.id)).toEqual([won, lost]);
    expect(both.revision).toBe(base.revision + 2);
    // A removal based on the old revision is refused and removes nothing.
    const staleRemove = await p.mutate(base, { op: 'note-remove', id: 'tab-a' });
    expect(staleRemove.status).toBe(409);
    expect(((await staleRemove.json()) as { reason: string }).reason).toBe('revision');
    // A reset from an old view is refused too; with the current revision it applies.
    expect((await p.mutate(base, { op: 'reset' })).status).toBe(409);
    expect((await p.notebook()).notes).toHaveLength(2);
    const reset = await p.mutate({ revision: both.revision, epoch: both.epoch }, { op: 'reset' });
    expect(reset.status).toBe(200);
    const cleared = await p.notebook();
    expect(cleared.notes).toEqual([]);
    expect(cleared.epoch).toBe(both.epoch + 1);
    // An old tab's additive write based on the previous epoch is not applied over the reset.
    const old = await p.mutate({ revision: both.revision, epoch: both.epoch }, { op: 'note-add', id: 'tab-c', text: 'old tab' });
    expect(old.status).toBe(409);
    expect(((await old.json()) as { reason: string }).reason).toBe('reset');
    expect((await p.notebook()).notes).toEqual([]);
    // Milestones are idempotent by key: a retried record never counts twice.
    const cur = { revision: cleared.revision, epoch: cleared.epoch };
    const rec = { op: 'record', milestones: [{ key: 'offer:12:1:gift', kind: 'offer-gift', level: 12, cycle: 1 }] };
    expect((await p.mutate(cur, rec)).status).toBe(200);
    // The same write again on the old revision is refused; re-applied on the current one it changes nothing.
    expect((await p.mutate(cur, rec)).status).toBe(409);
    const now = await p.notebook();
    expect((await p.mutate({ revision: now.revision, epoch: now.epoch }, rec)).status).toBe(200);
    expect((await p.notebook()).milestones).toHaveLength(1);
    expect((await p.notebook()).revision).toBe(now.revision);
    // Bad mutations: 4xx with the shared shape, nothing written.
    const bad = await p.mutate({ revision: now.revision, epoch: now.epoch }, { op: 'turns', turns: [] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
  });

  it('more than 60 notebook requests in a minute are refused', async () => {
    const p = await player('none');
    const base = { revision: 0, epoch: 0 };
    const rec = { op: 'record', milestones: [{ key: 'visit:b1', kind: 'visit', level: 6, cycle: 1 }] };
    const statuses = await Promise.all(Array.from({ length: 60 }, () => p.mutate(base, rec).then((r) => r.status)));
    // None rate limited: one applies, the others were based on a revision that is outdated by then.
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(59);
    const over = await p.mutate(base, rec);
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    // Sixty concurrent identical records: recorded once.
    expect((await p.notebook()).milestones).toHaveLength(1);
  });

  it('a reply that arrives after a reset is answered but not written over the cleared notebook', async () => {
    const p = await player();
    const nb = await p.notebook();
    fake.enqueue({ kind: 'completion', content: JSON.stringify({ reply: 'Late reply' }), chunkDelayMs: 0 });
    // The client's base is the epoch it saw; a reset happened in another tab before the reply is written.
    expect((await p.mutate({ revision: nb.revision, epoch: nb.epoch }, { op: 'reset' })).status).toBe(200);
    const res = await p.generate('hello', { notebook: { revision: nb.revision, epoch: nb.epoch } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { notebook: { saved: boolean } }).notebook.saved).toBe(false);
    expect((await p.notebook()).turns).toEqual([]);
    // Same epoch, outdated revision (another tab wrote meanwhile): answered, not merged into the notebook.
    const fresh = await p.notebook();
    expect((await p.mutate({ revision: fresh.revision, epoch: fresh.epoch }, { op: 'note-add', id: 'other-tab', text: 'written meanwhile' })).status).toBe(200);
    const stale = await p.generate('hello again', { notebook: { revision: fresh.revision, epoch: fresh.epoch } });
    expect(stale.status).toBe(200);
    const staleBody = (await stale.json()) as { notebook: { saved: boolean; revision: number } };
    expect(staleBody.notebook).toMatchObject({ saved: false, revision: fresh.revision + 1 });
    const after = await p.notebook();
    expect(after.turns).toEqual([]);
    expect(after.notes.map((n) => n.id)).toEqual(['other-tab']);
  });

  it('the 64 KiB constraint holds under a fuzz of long turns; the database refuses anything bigger', async () => {
    const p = await player();
    const alphabet = ['a', 'é', '中', '😀', '\u0000', '\ud800', ' ', '"', '\\', '\n'];
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    const text = () => Array.from({ length: 200 + Math.floor(random() * 3000) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
    for (let i = 0; i < 60; i++) {
      const current = await readNotebook(server.ctx, p.accountId);
      const write = await mutateNotebook(
        server.ctx,
        p.accountId,
        [
          { op: 'turns', turns: [{ role: 'player', text: text(), level: 1 + (i % 50), cycle: 1 }, { role: 'companion', text: text(), level: 1 + (i % 50), cycle: 1 }] },
          { op: 'statement', text: text().slice(0, 100), level: 1, cycle: 1 },
        ],
        { revision: current.revision, epoch: current.epoch },
        Date.now(),
      );
      expect(write.status).toBe('applied');
    }
    const { rows } = await server.ctx.db.primary.query<{ bytes: number; turns: number }>(
      `select octet_length(notebook::text) as bytes, jsonb_array_length(notebook->'turns') as turns from game_npc_companion_memory where account_id = $1`,
      [p.accountId],
    );
    expect(rows[0]!.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(rows[0]!.turns).toBeGreaterThan(0);
    expect(rows[0]!.turns).toBeLessThanOrEqual(24);
    expect((await p.notebook()).statements.length).toBeLessThanOrEqual(8);
    await expect(
      server.ctx.db.primary.query(`update game_npc_companion_memory set notebook = jsonb_build_object('x', repeat('y', 70000)) where account_id = $1`, [p.accountId]),
    ).rejects.toThrow(/game_npc_companion_memory_size/);
  });

  it('deleting the account removes its notebook (cascade)', async () => {
    const p = await player();
    expect((await p.mutate({ revision: 0, epoch: 0 }, { op: 'note-add', id: 'n', text: 'remember me' })).status).toBe(200);
    const count = async () =>
      (await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from game_npc_companion_memory where account_id = $1', [p.accountId])).rows[0]!.n;
    expect(await count()).toBe(1);
    expect((await p.b.fetch('/api/account', { method: 'DELETE', json: { password: 'long enough pw' } })).status).toBe(200);
    expect(await count()).toBe(0);
  });

  it('a fresh database: no migration creates the notebook table; it appears after the port is bound', async () => {
    const dir = new URL('../../../../migrations/', import.meta.url);
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.sql'))) {
      expect(readFileSync(new URL(file, dir), 'utf8'), file).not.toMatch(/game_npc_companion_memory/);
    }
    const lines: string[] = [];
    const fresh = await startTestServer({ LOG_LEVEL: 'info' }, { logDestination: { write: (line: string) => void lines.push(line) } });
    try {
      const exists = async () =>
        (await fresh.ctx.db.primary.query<{ t: string | null }>(`select to_regclass('public.game_npc_companion_memory')::text as t`)).rows[0]!.t;
      await expect.poll(exists, { timeout: 10_000 }).toBe('game_npc_companion_memory');
      const messages = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
      const listening = messages.findIndex((m) => m.startsWith('Listening on'));
      const ready = messages.indexOf('companion notebook table ready');
      expect(listening).toBeGreaterThanOrEqual(0);
      expect(ready).toBeGreaterThan(listening);
      // Provisioning again creates nothing new and rewrites nothing.
      expect(await provisionNotebookTable(fresh.ctx)).toBe(true);
    } finally {
      await fresh.stop();
    }
  });

  it('provisioning gives up within its 1 s lock deadline and is retried by the next notebook request', async () => {
    // Runs last: the table is dropped to provision it again from scratch.
    await server.ctx.db.primary.query('drop table game_npc_companion_memory');
    const p = await player('none');
    // A fresh context (fresh provisioning state) on the same database, as a replica starting now.
    const ctx = { ...server.ctx };
    const blocker = new pg.Client({ connectionString: server.database.url });
    await blocker.connect();
    try {
      await blocker.query('begin');
      await blocker.query('lock table accounts in access exclusive mode');
      const started = Date.now();
      expect(await provisionNotebookTable(ctx)).toBe(false);
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(provisionState(ctx)).toBe('deferred');
    } finally {
      await blocker.query('rollback');
      await blocker.end();
    }
    const app = await buildApp(ctx, { web: false });
    try {
      const res = await app.inject({ method: 'GET', url: '/api/game/npc/companion/notebook', headers: { cookie: p.b.cookieHeader } });
      expect(res.statusCode).toBe(200);
      expect(res.json().notebook.revision).toBe(0);
      expect(provisionState(ctx)).toBe('ready');
    } finally {
      await app.close();
    }
  });
});
