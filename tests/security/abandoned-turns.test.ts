import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isCleanErrorBody, parseEvents, readEvents } from '../support/collector.ts';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 28, point 4: an abandoned or hanging turn never holds the session. A player who leaves
 * mid-stream stops the provider call at once (the partial reply billed as a stop); a
 * provider that never answers, or stops sending mid-stream, is cut at the turn's first-byte or idle
 * deadline (short here: AI_FIRST_BYTE_TIMEOUT_MS, AI_IDLE_TIMEOUT_MS) with a clear message, kept
 * on the player's message (issue 30 A2: no reply of the world is kept for a failed turn). In each case the session takes the next turn within the
 * deadline, every credit charged has its one usage row, and no message stays `streaming`. Played on
 * platform credits (the official provider, welcome credits).
 */

const FIRST_BYTE_MS = 1_500;
const IDLE_MS = 1_500;
/** What a busy shared machine may add to a deadline before the session is free again. */
const SLACK_MS = 4_000;

const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8')) as unknown;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** `promise`, or a failure naming `what` when it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('abandoned and hanging turns release the session (issue 28, point 4)', () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let worldId: string;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: 'sk-official' });
    server = await startTestServer({
      OFFICIAL_AI_BASE_URL: fake.url,
      OFFICIAL_AI_API_KEY: 'sk-official',
      OFFICIAL_AI_MODEL: 'official-model',
      WELCOME_CREDITS: '1000',
      AI_FIRST_BYTE_TIMEOUT_MS: String(FIRST_BYTE_MS),
      AI_IDLE_TIMEOUT_MS: String(IDLE_MS),
    });
    const author = new Browser(server.url);
    await signUp(server, author, { email: 'turns-author@example.com', password: 'long enough pw' });
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    worldId = ((await (await author.fetch('/api/worlds', { method: 'POST', json: { world } })).json()) as { id: string }).id;
    expect((await author.fetch(`/api/worlds/${worldId}/publish`, { method: 'POST' })).status).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await fake?.close();
  });

  /** A new player on welcome credits with a session of the world (its own account, so its ledger is its own). */
  async function player(name: string): Promise<{ b: Browser; accountId: string; sessionId: string }> {
    const b = new Browser(server.url);
    expect((await signUp(server, b, { email: `${name}@example.com`, password: 'long enough pw' })).status).toBe(201);
    const accountId = ((await (await b.fetch('/api/auth/session')).json()) as { account: { id: string } }).account.id;
    const s = (await (await b.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
    return { b, accountId, sessionId: s.session.id };
  }

  /**
   * Sends a new message until the session takes it (409 SESSION_BUSY meanwhile), within `withinMs`
   * of `since`; the turn then completes. Returns when it was taken, in ms after `since`.
   */
  async function nextTurnTaken(b: Browser, sessionId: string, since: number, withinMs: number): Promise<number> {
    fake.setHandler(() => fakeReplies.completion('The way ahead is clear.'));
    for (;;) {
      const res = await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I go on' } });
      const elapsed = Date.now() - since;
      if (res.status === 200) {
        expect((await readEvents(res)).at(-1)!.event).toBe('done');
        return elapsed;
      }
      expect(res.status).toBe(409);
      await res.arrayBuffer();
      if (elapsed > withinMs) throw new Error(`the session still answered 409 SESSION_BUSY ${elapsed} ms later (allowed: ${withinMs} ms)`);
      await sleep(100);
    }
  }

  async function messages(sessionId: string) {
    return (
      await server.ctx.db.primary.query<{ role: string; content: string; status: string; error_message: string | null; error_code: string | null }>(
        'select role, content, status, error_message, error_code from chat_messages where session_id = $1 order by position',
        [sessionId],
      )
    ).rows;
  }

  /** Credits charged and usage rows of an account: each charge has exactly one usage row, nothing is held, the balance is the ledger's sum. */
  async function ledger(accountId: string) {
    const q = async <R,>(sql: string) => (await server.ctx.db.primary.query(sql, [accountId])).rows as R[];
    const [sums] = await q<{ open: number; charges: number; usage: number; matched: number; partial: number; balance: number; ledger: number }>(
      `select (select count(*) from credit_reservations where account_id = $1 and status = 'reserved')::int as open,
              (select count(*) from credit_ledger where account_id = $1 and kind = 'charge')::int as charges,
              (select count(*) from usage_ledger where account_id = $1 and billing_source = 'official')::int as usage,
              (select count(*) from credit_ledger c join usage_ledger u on u.reservation_id = c.reservation_id where c.account_id = $1 and c.kind = 'charge')::int as matched,
              (select count(*) from usage_ledger where account_id = $1 and partial)::int as partial,
              (select credits from billing_accounts where account_id = $1)::int as balance,
              (select coalesce(sum(amount), 0) from credit_ledger where account_id = $1)::int as ledger`,
    );
    return sums!;
  }

  it('a player who leaves mid-stream stops the provider at once; the partial reply is billed as a stop and noted on the player\'s message', async () => {
    const { b, accountId, sessionId } = await player('leaver');
    fake.reset();
    // 10 s of reply, a chunk every 100 ms: never idle, far from finished when the player leaves
    const full = 'The corridor stretches on, torchlight dancing over wet stone. '.repeat(4);
    fake.enqueue(fakeReplies.slowStream(full, 100, 100));
    const leaving = new AbortController();
    const res = await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I walk on' }, signal: leaving.signal });
    expect(res.status).toBe(200);
    // read until some reply text has arrived, then leave (the tab closes: the connection goes)
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/event: delta/g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    const left = Date.now();
    leaving.abort();
    await expect.poll(() => fake.completions[0]?.aborted, { timeout: SLACK_MS, interval: 50 }).toBe(true);
    console.log(`leaver: provider request aborted ${Date.now() - left} ms after the player left`);

    const taken = await nextTurnTaken(b, sessionId, left, SLACK_MS);
    console.log(`leaver: next turn taken ${taken} ms after the player left`);
    const rows = await messages(sessionId);
    expect(rows.filter((m) => m.status === 'streaming')).toEqual([]);
    // no reply is kept (issue 30 A2): the stop is noted on the player's message, the next turn follows it
    const abandoned = rows.at(-3)!;
    expect(abandoned).toMatchObject({ role: 'user', content: 'I walk on', error_code: 'AI_ABORTED', error_message: 'Stopped before the reply was finished.' });
    expect(rows.some((m) => m.role === 'assistant' && full.startsWith(m.content) && m.content.length > 0)).toBe(false);
    const l = await ledger(accountId);
    expect(l.open).toBe(0);
    expect(l.charges).toBe(2); // the partial reply and the next turn
    expect(l.usage).toBe(l.charges);
    expect(l.matched).toBe(l.charges);
    expect(l.partial).toBe(1);
    expect(l.balance).toBe(l.ledger);
  }, 30_000);

  it('a provider that never answers: the first-byte deadline fails the reply with a clear message and frees the session', async () => {
    const { b, accountId, sessionId } = await player('hang');
    fake.reset();
    fake.enqueue({ kind: 'hang' });
    const started = Date.now();
    const turn = await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Hello?' } });
    expect(turn.status).toBe(200); // the turn has started (the stream opens before the provider is asked)
    const taken = await nextTurnTaken(b, sessionId, started, FIRST_BYTE_MS + SLACK_MS);
    console.log(`hang: next turn taken ${taken} ms after the first was sent (first-byte deadline ${FIRST_BYTE_MS} ms)`);
    expect(taken).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 100);
    const events = parseEvents(await turn.text());
    const error = events.find((e) => e.event === 'error')!;
    expect(error.data).toMatchObject({ code: 'AI_PROVIDER_TIMEOUT', stopped: false });
    expect(isCleanErrorBody({ error: error.data })).toBe(true);
    expect(String(error.data.message)).toMatch(/did not start answering within 1\.5 s/);
    expect(fake.completions[0]!.aborted).toBe(true);

    const rows = await messages(sessionId);
    expect(rows.filter((m) => m.status === 'streaming')).toEqual([]);
    expect(rows.at(-3)).toMatchObject({ role: 'user', content: 'Hello?', status: 'complete', error_code: 'AI_PROVIDER_TIMEOUT', error_message: error.data.message });
    const l = await ledger(accountId);
    expect(l).toMatchObject({ open: 0, charges: 1, usage: 1, matched: 1, partial: 0 }); // nothing arrived: only the next turn is charged
    expect(l.balance).toBe(l.ledger);
  }, 30_000);

  it('a provider that stops sending mid-stream: the idle deadline fails the turn, bills the text that arrived, and frees the session', async () => {
    const { b, accountId, sessionId } = await player('stall');
    fake.reset();
    fake.enqueue({ kind: 'stall', content: 'The lantern flickers and', chunks: 2 });
    const started = Date.now();
    const turn = await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I light the lantern' } });
    expect(turn.status).toBe(200);
    const taken = await nextTurnTaken(b, sessionId, started, IDLE_MS + SLACK_MS);
    console.log(`stall: next turn taken ${taken} ms after the first was sent (idle deadline ${IDLE_MS} ms)`);
    const events = parseEvents(await turn.text());
    expect(events.filter((e) => e.event === 'delta').map((e) => e.data.text).join('')).toBe('The lantern flickers and');
    const error = events.at(-1)!;
    expect(error.event).toBe('error');
    expect(error.data).toMatchObject({ code: 'AI_PROVIDER_TIMEOUT', stopped: false });
    expect(String(error.data.message)).toMatch(/stopped sending for 1\.5 s/);
    expect(fake.completions[0]!.aborted).toBe(true);

    const rows = await messages(sessionId);
    expect(rows.filter((m) => m.status === 'streaming')).toEqual([]);
    // the text that arrived is billed, but it is not a reply of the world: the failure is on the player's message
    expect(rows.at(-3)).toMatchObject({ role: 'user', content: 'I light the lantern', error_code: 'AI_PROVIDER_TIMEOUT', error_message: error.data.message });
    expect(rows.some((m) => m.content.includes('The lantern flickers'))).toBe(false);
    const l = await ledger(accountId);
    expect(l).toMatchObject({ open: 0, charges: 2, usage: 2, matched: 2, partial: 1 }); // the partial reply and the next turn
    expect(l.balance).toBe(l.ledger);
  }, 30_000);

  it('regenerate runs under the same deadlines', async () => {
    const { b, sessionId } = await player('regenerate');
    fake.reset();
    fake.setHandler(() => fakeReplies.completion('A first reply.'));
    await readEvents(await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'Hello' } }));
    fake.enqueue({ kind: 'stall', content: 'A second', chunks: 1 });
    const res = await b.fetch(`/api/sessions/${sessionId}/regenerate`, { method: 'POST' });
    const events = await within(readEvents(res), IDLE_MS + SLACK_MS, 'the regenerated reply ended');
    expect(events.at(-1)).toMatchObject({ event: 'error', data: { code: 'AI_PROVIDER_TIMEOUT' } });
    expect((await messages(sessionId)).filter((m) => m.status === 'streaming')).toEqual([]);
    await nextTurnTaken(b, sessionId, Date.now(), SLACK_MS);
  }, 30_000);
});
