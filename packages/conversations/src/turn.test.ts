import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbPool } from '@yumina/db';
import { createMigratedDatabase, hasPostgres, type MigratedDatabase } from '../../../tests/support/postgres.ts';
import { completeTurn, settleStreamingReplies, startTurn, turnSession } from './turn.ts';

const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

describe.runIf(hasPostgres)('the persistence of a turn (real PostgreSQL)', () => {
  let database: MigratedDatabase;
  let db: DbPool;

  /** An account, its world and a session holding `messages` ([role, content, status]). */
  async function session(messages: [string, string, string][] = []) {
    const account = id('acc');
    const world = id('wld');
    const sessionId = id('cnv');
    await db.query(`insert into accounts (id, email, display_name) values ($1, $2, 'Player')`, [account, `${account}@example.com`]);
    await db.query(`insert into worlds (id, owner_id, name, description, tags, language, definition) values ($1, $2, 'W', '', '{}', null, '{}')`, [world, account]);
    await db.query(
      `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count) values ($1, $2, $3, 'S', 'seed', '{"turn":1}', '{}', $4)`,
      [sessionId, world, account, messages.length],
    );
    for (const [i, [role, content, status]] of messages.entries()) {
      await db.query(`insert into chat_messages (id, session_id, position, role, content, status) values ($1, $2, $3, $4, $5, $6)`, [id('msg'), sessionId, i, role, content, status]);
    }
    return { account, world, sessionId };
  }

  beforeAll(async () => {
    database = await createMigratedDatabase();
    db = database.db;
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('turnSession answers only the owner, with the stamp of the world', async () => {
    const { account, world, sessionId } = await session();
    const row = await turnSession(db, sessionId, account);
    expect(row).toMatchObject({ id: sessionId, world_id: world, seed: 'seed', memory: '', message_count: 0 });
    expect(row!.world).toMatchObject({ owner_id: account, status: 'saved', revision: 1, has_live: false, live_revision: null });
    expect(row!.account).toEqual({ billingPreference: null, connection: null, persona: null });
    expect(await turnSession(db, sessionId, id('acc'))).toBeNull();
  });

  it('turnSession brings the account billing preference, private connection and active persona (never an inactive one)', async () => {
    const { account, sessionId } = await session();
    await db.query(`insert into billing_accounts (account_id, preference) values ($1, 'private')`, [account]);
    await db.query(`insert into ai_connections (account_id, base_url, default_model) values ($1, 'https://ai.example', 'story-model')`, [account]);
    await db.query(`insert into personas (id, account_id, name, description, is_active) values ($1, $2, 'Old', '', false), ($3, $2, 'Mira', 'A cartographer', true)`, [id('per'), account, id('per')]);
    const row = await turnSession(db, sessionId, account);
    expect(row!.account.billingPreference).toBe('private');
    expect(row!.account.connection).toMatchObject({ base_url: 'https://ai.example', default_model: 'story-model', key_ciphertext: null });
    expect(row!.account.persona).toMatchObject({ name: 'Mira', description: 'A cartographer' });
  });

  it('startTurn settles streaming replies, reads the history before the turn and stores both messages after it', async () => {
    const { sessionId } = await session([
      ['assistant', 'greeting', 'complete'],
      ['user', 'hello', 'complete'],
      ['assistant', 'half a rep', 'streaming'],
    ]);
    const userMessageId = id('msg');
    const replyId = id('msg');
    const started = await startTurn(db, { sessionId, content: 'again', userMessageId, replyId });
    expect(started).toMatchObject({ stale: false, position: 3, state: '{"turn":1}', replyId });
    if (started.stale) throw new Error('unreachable');
    expect(started.messages.map((m) => [m.role, m.content, m.status])).toEqual([
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
    const count = await db.query<{ message_count: number }>('select message_count from chat_sessions where id = $1', [sessionId]);
    expect(count.rows[0]!.message_count).toBe(5);
  });

  it('startTurn writes nothing when the client saw another count (another tab wrote)', async () => {
    const { sessionId } = await session([['assistant', 'greeting', 'complete']]);
    expect(await startTurn(db, { sessionId, content: 'x', expectedMessageCount: 3, userMessageId: id('msg'), replyId: id('msg') })).toEqual({ stale: true });
    const { rows } = await db.query<{ n: number }>('select count(*)::int as n from chat_messages where session_id = $1', [sessionId]);
    expect(rows[0]!.n).toBe(1);
    const ok = await startTurn(db, { sessionId, content: 'x', expectedMessageCount: 1, userMessageId: id('msg'), replyId: id('msg') });
    expect(ok).toMatchObject({ stale: false, position: 1 });
  });

  it('completeTurn writes the reply (truncated included) and the session state in one statement', async () => {
    const { sessionId } = await session();
    const replyId = id('msg');
    await startTurn(db, { sessionId, content: 'go', userMessageId: id('msg'), replyId });
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
    });
    expect(written).toMatchObject({ position: 1, role: 'assistant', compacted: false, attachments: '[]' });
    const { rows } = await db.query('select status, content, raw_content, state_snapshot, truncated, token_count from chat_messages where id = $1', [replyId]);
    expect(rows[0]).toEqual({ status: 'complete', content: 'shown', raw_content: 'shown [gold: +1]', state_snapshot: '{"turn":2}', truncated: true, token_count: 7 });
    const s = await db.query<{ state: string }>('select state from chat_sessions where id = $1', [sessionId]);
    expect(s.rows[0]!.state).toBe('{"turn":2}');
    await db.query('delete from chat_messages where id = $1', [replyId]);
    await expect(completeTurn(db, { ...{ sessionId, replyId }, content: '', rawContent: '', stateChanges: '[]', state: '{}', swipes: '[]', activeSwipeIndex: 0, model: 'm', tokenCount: 0, generationTimeMs: 0, truncated: false, summary: null })).rejects.toThrow(/removed/);
  });

  it('settleStreamingReplies fails what is left streaming and counts it', async () => {
    const { sessionId } = await session([['assistant', 'half', 'streaming']]);
    expect(await settleStreamingReplies(db, sessionId)).toBe(1);
    expect(await settleStreamingReplies(db, sessionId)).toBe(0);
  });
});
