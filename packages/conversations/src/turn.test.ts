import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbPool } from '@yumina/db';
import { createMigratedDatabase, type MigratedDatabase } from '../../../tests/support/postgres.ts';
import { HistoryCache } from './history-cache.ts';
import { completeTurn, releaseTurn, settleAbandonedReplies, settleStreamingReplies, startTurn, type StartTurnInput, type StartTurnResult, type TurnHistoryMessage } from './turn.ts';

const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

describe('the persistence of a turn (real PostgreSQL)', () => {
  let database: MigratedDatabase;
  let db: DbPool;

  /** An account signed in (its login's token hash), with no session. */
  async function signedIn() {
    const account = id('acc');
    const tokenHash = createHash('sha256').update(id('tok')).digest();
    await db.query(`insert into accounts (id, email, display_name, username) values ($1, $2, 'Player', $3)`, [account, `${account}@example.com`, account.slice(4, 20)]);
    await db.query(`insert into login_sessions (id, account_id, token_hash, expires_at) values ($1, $2, $3, now() + interval '1 day')`, [id('ses'), account, tokenHash]);
    return { account, tokenHash };
  }

  /** A signed-in account, its world and a session holding `messages` ([role, content, status]). */
  async function session(messages: [string, string, string][] = []) {
    const { account, tokenHash } = await signedIn();
    const world = id('wld');
    const sessionId = id('cnv');
    await db.query(`insert into worlds (id, owner_id, name, description, tags, language, definition) values ($1, $2, 'W', '', '{}', null, '{}')`, [world, account]);
    await db.query(
      `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count) values ($1, $2, $3, 'S', 'seed', '{"turn":1}', '{}', $4)`,
      [sessionId, world, account, messages.length],
    );
    for (const [i, [role, content, status]] of messages.entries()) {
      await db.query(`insert into chat_messages (id, session_id, position, role, content, status) values ($1, $2, $3, $4, $5, $6)`, [id('msg'), sessionId, i, role, content, status]);
    }
    return { account, world, sessionId, tokenHash };
  }

  beforeAll(async () => {
    database = await createMigratedDatabase();
    db = database.db;
  });
  afterAll(async () => {
    await database?.drop();
  });

  const turn = (sessionId: string, tokenHash: Buffer, extra: Partial<StartTurnInput> = {}): StartTurnInput => ({
    tokenHash,
    sessionId,
    lockToken: id('lck'),
    content: 'go on',
    userMessageId: id('msg'),
    replyId: id('msg'),
    ...extra,
  });
  const started = (result: StartTurnResult) => {
    if (result.status !== 'started') throw new Error(`the turn did not start: ${result.status}`);
    return result;
  };
  const usageRow = (accountId: string, purpose: string) => ({
    accountId,
    model: 'm',
    requestedModel: 'm',
    providerModel: null,
    tokensIn: 900,
    tokensOut: 300,
    estimated: false,
    partial: false,
    billingSource: 'private' as const,
    purpose,
    reservationId: null,
  });
  const complete = (sessionId: string, replyId: string, content: string, lockToken?: string) =>
    completeTurn(db, { sessionId, replyId, content, rawContent: content, stateChanges: '[]', state: '{}', swipes: '[]', activeSwipeIndex: 0, model: 'm', tokenCount: 1, generationTimeMs: 1, truncated: false, summary: null, lockToken });
  const count = async (sessionId: string) =>
    (await db.query<{ n: number }>('select count(*)::int as n from chat_messages where session_id = $1', [sessionId])).rows[0]!.n;
  const lockOf = async (sessionId: string) =>
    (await db.query<{ turn_token: string | null }>('select turn_token from chat_sessions where id = $1', [sessionId])).rows[0]!.turn_token;

  it('startTurn answers the login; only the owner starts a turn, with the stamp of the world; nothing is written otherwise', async () => {
    const { account, world, sessionId, tokenHash } = await session([['assistant', 'greeting', 'complete']]);
    expect(await startTurn(db, turn(sessionId, createHash('sha256').update('no such login').digest()))).toEqual({ status: 'unauthenticated' });
    const other = await signedIn();
    expect(await startTurn(db, turn(sessionId, other.tokenHash))).toMatchObject({ status: 'not-found', login: { accountId: other.account } });
    expect(await startTurn(db, turn(id('cnv'), tokenHash))).toMatchObject({ status: 'not-found', login: { accountId: account } });
    expect(await count(sessionId)).toBe(1);
    expect(await lockOf(sessionId)).toBeNull();
    const lockToken = id('lck');
    const s = started(await startTurn(db, turn(sessionId, tokenHash, { lockToken })));
    expect(s.login).toMatchObject({ accountId: account, username: account.slice(4, 20) });
    expect(s.login.expiresAt).toBeInstanceOf(Date);
    expect(s.session).toMatchObject({ id: sessionId, world_id: world, seed: 'seed', memory: '', message_count: 1 });
    expect(s.session.world).toMatchObject({ owner_id: account, status: 'saved', revision: 1, has_live: false, live_revision: null });
    expect(s.session.account).toEqual({ billingPreference: null, connection: null, persona: null });
    expect(await count(sessionId)).toBe(3);
    expect(await lockOf(sessionId)).toBe(lockToken);
    // an ended login no longer starts anything
    await db.query('update login_sessions set ended_at = now() where token_hash = $1', [tokenHash]);
    expect(await startTurn(db, turn(sessionId, tokenHash))).toEqual({ status: 'unauthenticated' });
  });

  it('startTurn brings the account billing preference, private connection and active persona (never an inactive one)', async () => {
    const { account, sessionId, tokenHash } = await session();
    await db.query(`insert into billing_accounts (account_id, preference) values ($1, 'private')`, [account]);
    await db.query(`insert into ai_connections (account_id, base_url, default_model) values ($1, 'https://ai.example', 'story-model')`, [account]);
    await db.query(`insert into personas (id, account_id, name, description, is_active) values ($1, $2, 'Old', '', false), ($3, $2, 'Mira', 'A cartographer', true)`, [id('per'), account, id('per')]);
    const s = started(await startTurn(db, turn(sessionId, tokenHash)));
    expect(s.session.account.billingPreference).toBe('private');
    expect(s.session.account.connection).toMatchObject({ base_url: 'https://ai.example', default_model: 'story-model', key_ciphertext: null });
    expect(s.session.account.persona).toMatchObject({ name: 'Mira', description: 'A cartographer' });
  });

  it('the turn lock: one turn at a time, given back by completeTurn or releaseTurn, taken over once expired', async () => {
    const { sessionId, tokenHash } = await session();
    const first = turn(sessionId, tokenHash);
    const s = started(await startTurn(db, first));
    expect(await startTurn(db, turn(sessionId, tokenHash))).toMatchObject({ status: 'busy' });
    expect(await count(sessionId)).toBe(2);
    // another token does not give it back
    await complete(sessionId, s.replyId, 'done', id('lck'));
    expect(await lockOf(sessionId)).toBe(first.lockToken);
    await complete(sessionId, s.replyId, 'done', first.lockToken);
    expect(await lockOf(sessionId)).toBeNull();
    // a turn that fails: its reply and the lock in one statement
    const second = turn(sessionId, tokenHash);
    const s2 = started(await startTurn(db, second));
    await releaseTurn(db, { sessionId, lockToken: second.lockToken, failedReply: { id: s2.replyId, partial: 'half', message: 'it broke' } });
    expect(await lockOf(sessionId)).toBeNull();
    const { rows } = await db.query('select status, content, error_message from chat_messages where id = $1', [s2.replyId]);
    expect(rows[0]).toEqual({ status: 'failed', content: 'half', error_message: 'it broke' });
    // a holder that died: its lock expires and the next turn takes it (and settles its reply)
    started(await startTurn(db, turn(sessionId, tokenHash)));
    await db.query(`update chat_sessions set turn_until = now() - interval '1 second' where id = $1`, [sessionId]);
    const taken = started(await startTurn(db, turn(sessionId, tokenHash)));
    expect(taken.messages.map((m) => m.status).at(-1)).toBe('streaming'); // as it was before this turn settled it
    const statuses = await db.query<{ status: string }>('select status from chat_messages where session_id = $1 order by position', [sessionId]);
    expect(statuses.rows.map((r) => r.status)).toEqual(['complete', 'complete', 'complete', 'failed', 'complete', 'failed', 'complete', 'streaming']);
  });

  it('two sends at once: one starts, the other is busy, and nothing of it is written', async () => {
    const { sessionId, tokenHash } = await session([['assistant', 'greeting', 'complete']]);
    const results = await Promise.all([startTurn(db, turn(sessionId, tokenHash)), startTurn(db, turn(sessionId, tokenHash))]);
    expect(results.map((r) => r.status).sort()).toEqual(['busy', 'started']);
    expect(await count(sessionId)).toBe(3);
  });

  it('startTurn settles streaming replies, reads the history before the turn and stores both messages after it', async () => {
    const { sessionId, tokenHash } = await session([
      ['assistant', 'greeting', 'complete'],
      ['user', 'hello', 'complete'],
      ['assistant', 'half a rep', 'streaming'],
    ]);
    const userMessageId = id('msg');
    const replyId = id('msg');
    const s = started(await startTurn(db, turn(sessionId, tokenHash, { content: 'again', userMessageId, replyId })));
    expect(s).toMatchObject({ position: 3, state: '{"turn":1}', replyId });
    expect(s.messages.map((m) => [m.role, m.content, m.status])).toEqual([
      ['assistant', 'greeting', 'complete'],
      ['user', 'hello', 'complete'],
      ['assistant', 'half a rep', 'streaming'], // as it was before the turn: the prompt keeps complete messages only
    ]);
    const { rows } = await db.query<{ id: string; position: number; role: string; content: string; status: string; error_message: string | null }>(
      'select id, position, role, content, status, error_message from chat_messages where session_id = $1 order by position',
      [sessionId],
    );
    expect(rows.map((r) => [r.position, r.role, r.status])).toEqual([
      [0, 'assistant', 'complete'],
      [1, 'user', 'complete'],
      [2, 'assistant', 'failed'],
      [3, 'user', 'complete'],
      [4, 'assistant', 'streaming'],
    ]);
    expect(rows[2]!.error_message).toMatch(/interrupted/);
    expect(rows[3]).toMatchObject({ id: userMessageId, content: 'again' });
    expect(rows[4]!.id).toBe(replyId);
    const c = await db.query<{ message_count: number }>('select message_count from chat_sessions where id = $1', [sessionId]);
    expect(c.rows[0]!.message_count).toBe(5);
  });

  it('startTurn writes nothing when the client saw another count (another tab wrote)', async () => {
    const { sessionId, tokenHash } = await session([['assistant', 'greeting', 'complete']]);
    expect(await startTurn(db, turn(sessionId, tokenHash, { expectedMessageCount: 3 }))).toMatchObject({ status: 'stale' });
    expect(await count(sessionId)).toBe(1);
    expect(await lockOf(sessionId)).toBeNull();
    expect(await startTurn(db, turn(sessionId, tokenHash, { expectedMessageCount: 1 }))).toMatchObject({ status: 'started', position: 1 });
  });

  it('completeTurn writes the reply (truncated included), the session state and the usage rows in one statement', async () => {
    const { account, sessionId, tokenHash } = await session();
    const replyId = id('msg');
    const lockToken = id('lck');
    started(await startTurn(db, turn(sessionId, tokenHash, { content: 'go', replyId, lockToken })));
    const written = await completeTurn(db, {
      sessionId,
      replyId,
      content: 'shown',
      rawContent: 'shown [gold: +1]',
      stateChanges: '[{"gold":1}]',
      state: '{"turn":2}',
      swipes: '[]',
      activeSwipeIndex: 0,
      model: 'm',
      tokenCount: 7,
      generationTimeMs: 12,
      truncated: true,
      summary: null,
      usage: [usageRow(account, 'summary'), usageRow(account, 'chat')],
      lockToken,
    });
    expect(written).toMatchObject({ position: 1, role: 'assistant', compacted: false, attachments: '[]' });
    const { rows } = await db.query('select status, content, raw_content, state_snapshot, truncated, token_count from chat_messages where id = $1', [replyId]);
    expect(rows[0]).toEqual({ status: 'complete', content: 'shown', raw_content: 'shown [gold: +1]', state_snapshot: '{"turn":2}', truncated: true, token_count: 7 });
    const s = await db.query<{ state: string; turn_token: string | null }>('select state, turn_token from chat_sessions where id = $1', [sessionId]);
    expect(s.rows[0]).toEqual({ state: '{"turn":2}', turn_token: null });
    const usage = await db.query('select purpose, model, tokens_in, tokens_out, partial, billing_source from usage_ledger where account_id = $1 order by id', [account]);
    expect(usage.rows).toEqual([
      { purpose: 'summary', model: 'm', tokens_in: 900, tokens_out: 300, partial: false, billing_source: 'private' },
      { purpose: 'chat', model: 'm', tokens_in: 900, tokens_out: 300, partial: false, billing_source: 'private' },
    ]);
    // the reply is gone: nothing is written (state and usage rows included)
    await db.query('delete from chat_messages where id = $1', [replyId]);
    await expect(
      completeTurn(db, { ...{ sessionId, replyId }, content: '', rawContent: '', stateChanges: '[]', state: '{"turn":3}', swipes: '[]', activeSwipeIndex: 0, model: 'm', tokenCount: 0, generationTimeMs: 0, truncated: false, summary: null, usage: [usageRow(account, 'chat')] }),
    ).rejects.toThrow(/removed/);
    expect((await db.query('select 1 from usage_ledger where account_id = $1', [account])).rows).toHaveLength(2);
    expect((await db.query<{ state: string }>('select state from chat_sessions where id = $1', [sessionId])).rows[0]!.state).toBe('{"turn":2}');
  });

  it('settleStreamingReplies fails what is left streaming and counts it', async () => {
    const { sessionId } = await session([['assistant', 'half', 'streaming']]);
    expect(await settleStreamingReplies(db, sessionId)).toBe(1);
    expect(await settleStreamingReplies(db, sessionId)).toBe(0);
  });

  it('settleAbandonedReplies (maintenance) settles old streaming replies of sessions whose lock is free or expired, never of a held one', async () => {
    const held = await session();
    const free = await session([['assistant', 'half', 'streaming']]);
    started(await startTurn(db, turn(held.sessionId, held.tokenHash)));
    await db.query(`update chat_messages set created_at = now() - interval '1 hour' where session_id = any($1)`, [[held.sessionId, free.sessionId]]);
    const settledNow = await settleAbandonedReplies(db, 60);
    expect(settledNow).toBeGreaterThanOrEqual(1);
    const statusOf = async (sessionId: string) => (await db.query<{ status: string }>(`select status from chat_messages where session_id = $1 and role = 'assistant'`, [sessionId])).rows[0]!.status;
    expect(await statusOf(free.sessionId)).toBe('failed');
    expect(await statusOf(held.sessionId)).toBe('streaming');
    await db.query(`update chat_sessions set turn_until = now() - interval '1 second' where id = $1`, [held.sessionId]);
    await settleAbandonedReplies(db, 60);
    expect(await statusOf(held.sessionId)).toBe('failed');
  });

  describe('with a HistoryCache', () => {
    /** The db, recording how many history rows each startTurn brought (the statement's `changed`). */
    function recording() {
      const brought: number[] = [];
      const queryable = {
        query: async (config: never, params: never) => {
          const result = await db.query<Record<string, unknown>>(config, params);
          const head = result.rows[0];
          if (head && 'changed' in head) brought.push(((head.changed as unknown[] | null) ?? []).length);
          return result;
        },
      } as unknown as DbPool;
      return { queryable, brought };
    }
    const history = (m: readonly TurnHistoryMessage[]) => m.map((x) => [x.role, x.content, x.status]);
    /** One exchange through startTurn + completeTurn; answers the history the turn saw. */
    async function exchange(q: DbPool, cache: HistoryCache, tokenHash: Buffer, sessionId: string, n: number) {
      const input = turn(sessionId, tokenHash, { content: `say ${n}` });
      const s = started(await startTurn(q, input, cache));
      await complete(sessionId, s.replyId, `reply ${n}`, input.lockToken);
      return history(s.messages);
    }
    /** The history as PostgreSQL holds it (complete or not), before the newest exchange. */
    async function stored(sessionId: string, below: number) {
      const { rows } = await db.query<TurnHistoryMessage & Record<string, unknown>>(
        'select role, content, status from chat_messages where session_id = $1 and position < $2 order by position',
        [sessionId, below],
      );
      return history(rows);
    }

    it('a turn brings only the messages written since the turn before it, and sees the same history as a full read', async () => {
      for (const greeting of [[['assistant', 'greeting', 'complete']] as [string, string, string][], []]) {
        const { sessionId, tokenHash } = await session(greeting);
        const cache = new HistoryCache();
        const { queryable, brought } = recording();
        for (let n = 0; n < 6; n++) expect(await exchange(queryable, cache, tokenHash, sessionId, n)).toEqual(await stored(sessionId, greeting.length + 2 * n));
        // the first turn brings the greeting (if any); each later one the previous exchange (user message and reply)
        expect(brought).toEqual([greeting.length, 2, 2, 2, 2, 2]);
        expect(cache.misses).toBe(0);
      }
    });

    it('an edit, a revert or a settled reply below the cached length is seen: the history is read again in full', async () => {
      const { sessionId, tokenHash } = await session([['assistant', 'greeting', 'complete']]);
      const cache = new HistoryCache();
      for (let n = 0; n < 3; n++) await exchange(db, cache, tokenHash, sessionId, n);
      // an edit of an old reply (another tab, another replica): same length, new text
      await db.query(`update chat_messages set content = 'edited' where session_id = $1 and position = 2`, [sessionId]);
      let seen = await exchange(db, cache, tokenHash, sessionId, 3);
      expect(cache.misses).toBe(1);
      expect(seen).toEqual(await stored(sessionId, 7));
      expect(seen[2]).toEqual(['assistant', 'edited', 'complete']);
      // a revert to 3 messages, then a turn: shorter than the cache
      await db.query('delete from chat_messages where session_id = $1 and position >= 3', [sessionId]);
      await db.query('update chat_sessions set message_count = 3 where id = $1', [sessionId]);
      seen = await exchange(db, cache, tokenHash, sessionId, 4);
      expect(seen).toEqual(await stored(sessionId, 3));
      expect(seen).toHaveLength(3);
      // a revert and new turns back to the cached length: the same positions hold other rows
      await db.query('delete from chat_messages where session_id = $1 and position >= 1', [sessionId]);
      await db.query('update chat_sessions set message_count = 1 where id = $1', [sessionId]);
      await exchange(db, cache, tokenHash, sessionId, 5);
      seen = await exchange(db, cache, tokenHash, sessionId, 6);
      expect(seen).toEqual(await stored(sessionId, 3));
      expect(seen.map((m) => m[1])).toEqual(['greeting', 'say 5', 'reply 5']);
      // a turn that died (its lock expired): its reply is settled by the next turn and then read as failed
      started(await startTurn(db, turn(sessionId, tokenHash), cache));
      await db.query(`update chat_sessions set turn_until = now() - interval '1 second' where id = $1`, [sessionId]);
      await exchange(db, cache, tokenHash, sessionId, 7);
      seen = await exchange(db, cache, tokenHash, sessionId, 8);
      expect(seen).toEqual(await stored(sessionId, seen.length));
      expect(seen.filter((m) => m[2] !== 'complete')).toEqual([['assistant', '', 'failed']]);
    });

    it('keeps at most maxChars of text, least recently used out first, and never a history of more than a quarter of it', () => {
      const cache = new HistoryCache(100);
      const msgs = (chars: number) => [{ role: 'user' as const, content: 'x'.repeat(chars), status: 'complete' as const }];
      cache.set('a', { length: 1, fingerprint: '1', messages: msgs(20) });
      cache.set('b', { length: 1, fingerprint: '2', messages: msgs(25) });
      cache.set('c', { length: 1, fingerprint: '3', messages: msgs(26) });
      expect(cache.get('c')).toBeUndefined();
      cache.set('c', { length: 1, fingerprint: '3', messages: msgs(25) });
      cache.get('a'); // a is now the most recently used
      cache.set('d', { length: 1, fingerprint: '4', messages: msgs(25) });
      cache.set('e', { length: 1, fingerprint: '5', messages: msgs(25) });
      expect(cache.chars).toBeLessThanOrEqual(100);
      expect(cache.get('b')).toBeUndefined();
      expect(cache.get('a')?.fingerprint).toBe('1');
      expect(cache.get('e')?.fingerprint).toBe('5');
      cache.delete('e');
      expect(cache.get('e')).toBeUndefined();
      expect(cache.size).toBe(cache.get('d') ? 3 : 2);
    });
  });
});
