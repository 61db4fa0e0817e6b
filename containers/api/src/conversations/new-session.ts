import { type Authenticated, newId } from '@yumina/accounts';
import type { Queryable } from '@yumina/db';
import { startSession, type WorldDefinition } from '@yumina/world';
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { Swipe } from './model.ts';
import { enginePersona } from './persona.ts';

/**
 * A new session of a world for the account: the world's session start (its greeting, alternatives
 * as swipes; `{{user}}` the active persona's name, else the account's display name), stored in one
 * transaction with whatever `alsoWrite` adds (a room's row and its host). Returns its id and what
 * session start did once (notifications, audio, AI requests).
 */
export async function startNewSession(
  ctx: AppContext,
  auth: Pick<Authenticated, 'account'>,
  worldId: string,
  world: WorldDefinition,
  options: { branchedFrom?: string | null; alsoWrite?: (tx: Queryable, sessionId: string) => Promise<void> } = {},
) {
  const db = ctx.db.primary;
  const id = newId('cnv');
  const seed = randomBytes(8).toString('hex');
  const persona = await enginePersona(db, auth.account.id);
  const start = startSession(world as never, { now: new Date(), seed, sessionId: id, accountName: auth.account.displayName, persona });
  const initial = JSON.stringify(start.state);
  await db.transaction(async (tx) => {
    await tx.query(
      `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count, branched_from) values ($1, $2, $3, $4, $5, $6, $6, $7, $8)`,
      [id, worldId, auth.account.id, world.name, seed, initial, start.greetings.length ? 1 : 0, options.branchedFrom ?? null],
    );
    if (start.greetings.length) {
      const [first, ...alternatives] = start.greetings;
      const swipes: Swipe[] = [first!, ...alternatives].map((g) => ({ content: g, rawContent: g, snapshot: start.state, stateChanges: [] }));
      await tx.query(
        `insert into chat_messages (id, session_id, position, role, content, raw_content, state_snapshot, swipes) values ($1, $2, 0, 'assistant', $3, $3, $4, $5)`,
        [newId('msg'), id, first, initial, JSON.stringify(swipes)],
      );
    }
    await options.alsoWrite?.(tx, id);
  });
  return { id, start };
}
