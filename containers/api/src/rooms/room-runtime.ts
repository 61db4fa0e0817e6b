import { newId } from '@yumina/accounts';
import {
  completeTurn,
  lockTurn,
  roomHistory,
  type Room,
  roomOfSession,
  roomQueue,
  roomsDue,
  roomWithQueue,
  sessionMembers,
  startRoomTurn,
  touchRoom,
} from '@yumina/conversations';
import { HttpError, publicErrorOf } from '@yumina/http';
import type { PartyMember, WorldState } from '@yumina/world';
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { generateTurn, swipeOf, type TurnOutput, replyFigures } from '../conversations/generate.ts';
import { messageView, type MessageRow, playableWorld, type SessionRow, sessionMessages, type Swipe } from '../conversations/model.ts';
import { enginePersona } from '../conversations/persona.ts';
import { markTurnFailed, releaseTurnLock, SESSION_BUSY_MESSAGE } from '../conversations/turn-lock.ts';
import { emitRoomEvent, RoomHub } from './room-bus.ts';
import { RoomPresence } from './room-presence.ts';
import { memberView, queueView, roomStatusView } from './room-views.ts';

/**
 * A replica's side of rooms (docs/ROOMS.md): the rooms it watches (./room-bus.ts), who is online
 * (./room-presence.ts), and the replies it writes. A reply runs detached from the request that
 * started it (a member's message in instant or round mode, the host's button, a timer): it goes
 * on when that member leaves, streams to every member through the room's events, and the host
 * pays. While it runs, its replica keeps a lease in the shared store; a replica that finds a reply
 * `replying` without its lease (its writer died) ends it as failed, visibly, for the host to retry.
 */

/** How long a reply's lease lasts without renewal (s), and how often its writer renews it (ms). */
const LEASE_SECONDS = 6;
const LEASE_RENEW_MS = 2_000;
/** How often a replica serving room streams looks for timers that ran out elsewhere (ms). */
const SWEEP_MS = 10_000;
/** How soon a reply that found the session's lock taken (by an interface's action) is tried again (ms). */
const BUSY_RETRY_MS = 300;
const leaseKey = (sessionId: string) => `room-reply:${sessionId}`;

type ReplyJob = {
  room: Room;
  replyId: string;
  /** A new reply (removed if it fails) or one being regenerated or continued (kept as it was). */
  fresh: boolean;
  lockToken: string;
  base: { history: { role: 'user' | 'assistant'; content: string }[]; userMessage: string; state: WorldState; prefix?: string };
  /** The name `{{user}}` takes: the round's newest writer. */
  speaker: { accountId: string | null; name: string };
  apply: (out: TurnOutput) => { content: string; raw: string; swipes: Swipe[]; active: number };
};

export class RoomRuntime {
  readonly hub: RoomHub;
  readonly presence: RoomPresence;
  /** Replies written by this process, by room: stopped locally or through the store's 'chat:stop'. */
  readonly #running = new Map<string, AbortController>();
  readonly #timers = new Map<string, NodeJS.Timeout>();
  /** Rooms whose reply another replica writes, looked at again once its lease would have run out. */
  readonly #rechecks = new Map<string, NodeJS.Timeout>();
  #sweep: NodeJS.Timeout | null = null;
  readonly #ready: Promise<unknown>;

  constructor(private readonly ctx: AppContext) {
    this.hub = new RoomHub(ctx.store, ctx.log);
    this.presence = new RoomPresence(ctx.store, ctx.identity.bootId, (sessionId) => {
      void this.announceMembers(sessionId).catch((err: unknown) => ctx.log.warn({ err, sessionId }, 'room presence not announced'));
      // someone left or came: a round may be complete now
      void this.evaluate(sessionId).catch(() => {});
    });
    this.#ready = ctx.store.subscribe('chat:stop', (sessionId) => this.#running.get(sessionId)?.abort(new Error('Stopped by the host')));
  }

  get db() {
    return this.ctx.db.primary;
  }

  emit(sessionId: string, type: string, data: Record<string, unknown>): Promise<string> {
    return emitRoomEvent(this.ctx.store, sessionId, type, data);
  }

  /** The room's status and queue (one snapshot, with its version), to every member. */
  async announce(sessionId: string): Promise<void> {
    const read = await roomWithQueue(this.db, sessionId);
    if (!read) return;
    await this.emit(sessionId, 'room', { room: roomStatusView(read.room, read.queue.length), queue: read.queue.map(queueView) });
  }

  /** The members with who is online, to every member. */
  async announceMembers(sessionId: string): Promise<void> {
    const [members, online] = await Promise.all([sessionMembers(this.db, sessionId), this.presence.online(sessionId)]);
    await this.emit(sessionId, 'members', { members: members.map((m) => memberView(m, online)) });
  }

  /**
   * After a change (a message queued, a reply ended, a member came or went, the modes changed):
   * starts the reply the room's trigger mode calls for, or sets its timer.
   */
  async evaluate(sessionId: string): Promise<void> {
    const room = await roomOfSession(this.db, sessionId);
    if (!room || room.endedAt || room.replying) return;
    const queue = await roomQueue(this.db, sessionId);
    if (queue.length === 0) return;
    let due = false;
    if (room.triggerMode === 'instant') {
      due = true;
    } else if (room.triggerMode === 'round') {
      const [members, online] = await Promise.all([sessionMembers(this.db, sessionId), this.presence.online(sessionId)]);
      const players = members.filter((m) => (m.role === 'host' || m.role === 'player') && online.has(m.id));
      due = players.every((p) => queue.some((q) => q.participantId === p.id));
    } else if (room.triggerMode === 'timer' && room.collectUntil) {
      const wait = room.collectUntil.getTime() - Date.now();
      if (wait > 0) this.#timerAt(sessionId, wait);
      due = wait <= 0;
    }
    // the lock may be held a moment by an interface's action (no reply): try again once it is free
    if (due && (await this.trigger(sessionId)) === 'busy') this.#timerAt(sessionId, BUSY_RETRY_MS);
  }

  #timerAt(sessionId: string, waitMs: number): void {
    clearTimeout(this.#timers.get(sessionId));
    this.#timers.set(
      sessionId,
      setTimeout(() => {
        this.#timers.delete(sessionId);
        void this.evaluate(sessionId).catch((err: unknown) => this.ctx.log.warn({ err, sessionId }, 'room timer failed'));
      }, waitMs + 20),
    );
    this.#sweepWhileWatched();
  }

  /** While this replica serves room streams, it also starts replies whose timer ran out on a replica that died. */
  #sweepWhileWatched(): void {
    if (this.#sweep) return;
    this.#sweep = setInterval(() => {
      if (this.hub.rooms.length === 0 && this.#timers.size === 0) {
        clearInterval(this.#sweep!);
        this.#sweep = null;
        return;
      }
      void roomsDue(this.db)
        .then((due) => Promise.all(due.map((id) => this.evaluate(id))))
        .catch((err: unknown) => this.ctx.log.warn({ err }, 'room sweep failed'));
    }, SWEEP_MS);
    this.#sweep.unref();
  }

  /** A stream of the room opened here: its timer and its reply are looked after from now on. */
  watched(sessionId: string): void {
    this.#sweepWhileWatched();
    void this.recover(sessionId)
      .then(() => this.evaluate(sessionId))
      .catch((err: unknown) => this.ctx.log.warn({ err, sessionId }, 'room check failed'));
  }

  /** Starts a reply to the queued messages now: `started`, or why not (a reply runs, nothing waits, the room ended). */
  async trigger(sessionId: string): Promise<'started' | 'busy' | 'empty' | 'ended'> {
    const lockToken = randomUUID();
    const replyId = newId('msg');
    // the lease first: a replica checking between the lock and the lease would think the writer gone
    await this.ctx.store.set(leaseKey(sessionId), lockToken, LEASE_SECONDS);
    let started;
    try {
      started = await this.db.transaction((tx) => startRoomTurn(tx, { sessionId, lockToken, replyId, newMessageId: () => newId('msg') }));
    } catch (err) {
      await this.ctx.store.del(leaseKey(sessionId)).catch(() => {});
      throw err;
    }
    if (started.status !== 'started') {
      if ((await this.ctx.store.get(leaseKey(sessionId)).catch(() => null)) === lockToken) await this.ctx.store.del(leaseKey(sessionId)).catch(() => {});
      return started.status;
    }
    const room = (await roomOfSession(this.db, sessionId))!;
    const { rows } = await this.db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where session_id = $1 and id = any($2) order by position', [
      sessionId,
      started.round.map((m) => m.id),
    ]);
    await this.emit(sessionId, 'reply:start', { messageId: replyId, position: started.replyPosition, round: rows.map((m) => messageView(m)) });
    await this.announce(sessionId);
    const last = started.round.at(-1)!;
    const speakerAccount = await this.db.query<{ account_id: string | null }>('select account_id from session_participants where id = $1', [last.participantId]);
    this.#run({
      room,
      replyId,
      fresh: true,
      lockToken,
      base: {
        history: roomHistory(started.history),
        userMessage: roomHistory(started.round.map((m) => ({ role: 'user', content: m.content, status: 'complete', authorName: m.authorName })))[0]!.content,
        state: JSON.parse(started.state) as WorldState,
      },
      speaker: { accountId: speakerAccount.rows[0]?.account_id ?? null, name: last.authorName },
      apply: (out) => ({ content: out.result.displayText, raw: out.rawReply, swipes: [swipeOf(out)], active: 0 }),
    });
    return 'started';
  }

  /**
   * The host's regenerate, retry and continue: the last round again. Regenerate adds an alternative
   * of the last reply (or writes the reply a failed round lacks), continue carries the last reply on.
   */
  async redo(room: Room, kind: 'regenerate' | 'continue'): Promise<void> {
    const lockToken = randomUUID();
    await this.ctx.store.set(leaseKey(room.sessionId), lockToken, LEASE_SECONDS);
    if (!(await lockTurn(this.db, { sessionId: room.sessionId, accountId: room.hostAccountId, lockToken }))) {
      throw new HttpError(409, 'SESSION_BUSY', SESSION_BUSY_MESSAGE);
    }
    try {
      const messages = await sessionMessages(this.db, room.sessionId);
      const last = messages.at(-1);
      const answered = last?.role === 'assistant';
      let roundStart = answered ? messages.length - 1 : messages.length;
      while (roundStart > 0 && messages[roundStart - 1]!.role === 'user') roundStart--;
      const round = messages.slice(roundStart, answered ? -1 : undefined);
      if (round.length === 0 || (kind === 'continue' && !answered)) {
        throw new HttpError(409, kind === 'continue' ? 'NOTHING_TO_CONTINUE' : 'NOTHING_TO_REGENERATE', kind === 'continue' ? 'There is no reply to continue.' : 'There is no round to answer.');
      }
      const asHistory = (list: MessageRow[]) => list.map((m) => ({ role: m.role, content: m.content, status: m.status, authorName: m.author_name ?? null }));
      const first = round[0]!;
      const base = {
        history: roomHistory(asHistory(messages.slice(0, roundStart))),
        userMessage: roomHistory(asHistory(round).map((m) => ({ ...m, status: 'complete' as const })))[0]!.content,
        state: (first.state_snapshot ? JSON.parse(first.state_snapshot) : JSON.parse((await this.#session(room.sessionId)).initial_state)) as WorldState,
        ...(kind === 'continue' ? { prefix: last!.raw_content ?? last!.content } : {}),
      };
      const lastUser = round.at(-1)!;
      const speakerAccount = lastUser.participant_id
        ? (await this.db.query<{ account_id: string | null }>('select account_id from session_participants where id = $1', [lastUser.participant_id])).rows[0]?.account_id ?? null
        : null;
      const speaker = { accountId: speakerAccount, name: lastUser.author_name ?? '' };
      let replyId: string;
      let apply: ReplyJob['apply'];
      if (answered) {
        replyId = last!.id;
        const swipes = JSON.parse(last!.swipes) as Swipe[];
        await this.db.query(`update chat_messages set status = 'streaming', error_message = null where id = $1`, [replyId]);
        apply =
          kind === 'continue'
            ? (out) => {
                const index = Math.min(last!.active_swipe_index, Math.max(0, swipes.length - 1));
                const next = [...swipes];
                next[index] = swipeOf(out);
                return { content: out.result.displayText, raw: out.rawReply, swipes: next, active: index };
              }
            : (out) => ({ content: out.result.displayText, raw: out.rawReply, swipes: [...swipes, swipeOf(out)], active: swipes.length });
      } else {
        replyId = newId('msg');
        await this.db.query(`insert into chat_messages (id, session_id, position, role, content, status) values ($1, $2, $3, 'assistant', '', 'streaming')`, [
          replyId,
          room.sessionId,
          last!.position + 1,
        ]);
        await this.db.query('update chat_sessions set message_count = message_count + 1 where id = $1', [room.sessionId]);
        apply = (out) => ({ content: out.result.displayText, raw: out.rawReply, swipes: [swipeOf(out)], active: 0 });
      }
      await this.emit(room.sessionId, 'reply:start', { messageId: replyId, position: answered ? last!.position : last!.position + 1, round: [], redo: kind });
      await this.announce(room.sessionId);
      this.#run({ room, replyId, fresh: !answered, lockToken, base, speaker, apply });
    } catch (err) {
      await releaseTurnLock(this.ctx, room.sessionId, lockToken);
      await this.ctx.store.del(leaseKey(room.sessionId)).catch(() => {});
      throw err;
    }
  }

  /** The host's stop: the reply is stopped on whichever replica writes it. */
  async stop(sessionId: string): Promise<void> {
    this.#running.get(sessionId)?.abort(new Error('Stopped by the host'));
    await this.ctx.store.publish('chat:stop', sessionId);
  }

  async #session(sessionId: string): Promise<SessionRow> {
    const { rows } = await this.db.query<SessionRow & Record<string, unknown>>('select * from chat_sessions where id = $1', [sessionId]);
    if (!rows[0]) throw new HttpError(404, 'NOT_FOUND', 'No such room.');
    return rows[0];
  }

  /**
   * A reply marked `replying` whose writer is gone (no lease: its replica died or lost the store)
   * ends as failed, visibly, and the lock goes back: the host can retry it. True when it did.
   */
  async recover(sessionId: string): Promise<boolean> {
    const room = await roomOfSession(this.db, sessionId);
    if (!room?.replying || !room.turnToken || this.#running.has(sessionId)) return false;
    const lease = await this.ctx.store.get(leaseKey(sessionId)).catch(() => 'unknown');
    if (lease) {
      // written elsewhere: if that replica dies, its lease runs out; look again then (while watched here)
      if (!this.#rechecks.has(sessionId) && this.hub.rooms.includes(sessionId)) {
        const timer = setTimeout(() => {
          this.#rechecks.delete(sessionId);
          void this.recover(sessionId).catch(() => {});
        }, LEASE_SECONDS * 1000 + 250);
        timer.unref();
        this.#rechecks.set(sessionId, timer);
      }
      return false;
    }
    const { rows } = await this.db.query<{ id: string }>(`select id from chat_messages where session_id = $1 and status = 'streaming' order by position desc limit 1`, [sessionId]);
    const reply = rows[0];
    if (!reply) return false;
    const message = 'The server writing this reply stopped before it finished. The host can try again.';
    await markTurnFailed(this.ctx, { sessionId, replyId: reply.id, fresh: true, code: 'REPLY_INTERRUPTED', message, lockToken: room.turnToken });
    await touchRoom(this.db, sessionId);
    await this.emit(sessionId, 'reply:error', { messageId: reply.id, code: 'REPLY_INTERRUPTED', message, stopped: false });
    await this.announce(sessionId);
    return true;
  }

  #run(job: ReplyJob): void {
    const { sessionId } = job.room;
    const controller = new AbortController();
    this.#running.set(sessionId, controller);
    const renew = setInterval(() => void this.ctx.store.set(leaseKey(sessionId), job.lockToken, LEASE_SECONDS).catch(() => {}), LEASE_RENEW_MS);
    void this.#write(job, controller)
      .catch((err: unknown) => this.ctx.log.error({ err, sessionId }, 'room reply not settled'))
      .finally(async () => {
        clearInterval(renew);
        this.#running.delete(sessionId);
        // the round's state changed (no longer replying): its version rises before it is announced
        await touchRoom(this.db, sessionId).catch(() => {});
        if ((await this.ctx.store.get(leaseKey(sessionId)).catch(() => null)) === job.lockToken) await this.ctx.store.del(leaseKey(sessionId)).catch(() => {});
        await this.announce(sessionId).catch(() => {});
        await this.evaluate(sessionId).catch((err: unknown) => this.ctx.log.warn({ err, sessionId }, 'room not evaluated after a reply'));
      });
  }

  async #write(job: ReplyJob, controller: AbortController): Promise<void> {
    const { room, replyId } = job;
    const sessionId = room.sessionId;
    // Deltas of one turn of the event loop leave as one event; `at` is where the text goes (a
    // replayed event is applied once).
    let written = 0;
    let pending = '';
    let reasoning = '';
    const flush = () => {
      if (pending) {
        const text = pending;
        pending = '';
        void this.emit(sessionId, 'delta', { messageId: replyId, at: written, text }).catch(() => {});
        written += text.length;
      }
      if (reasoning) {
        const text = reasoning;
        reasoning = '';
        void this.emit(sessionId, 'reasoning', { messageId: replyId, text }).catch(() => {});
      }
    };
    try {
      const session = await this.#session(sessionId);
      const world = await playableWorld(this.db, room.worldId, room.hostAccountId);
      const members = await sessionMembers(this.db, sessionId);
      const party: PartyMember[] = [];
      for (const m of members) {
        if (m.kind !== 'human' || !m.accountId || (m.role !== 'host' && m.role !== 'player')) continue;
        party.push({ id: m.accountId, name: m.name, persona: await enginePersona(this.db, m.accountId) });
      }
      const speaker = party.find((p) => p.id === job.speaker.accountId);
      if (job.base.prefix) written = job.base.prefix.length;
      const out = await generateTurn(this.ctx, {
        accountId: room.hostAccountId,
        accountName: job.speaker.name,
        persona: speaker?.persona ?? null,
        party,
        sessionId,
        seed: session.seed,
        world,
        state: job.base.state,
        history: job.base.history,
        userMessage: job.base.userMessage,
        prefix: job.base.prefix,
        summary: session.summary,
        memory: session.memory ?? null,
        signal: controller.signal,
        onDelta: (text) => {
          if (!pending && !reasoning) setImmediate(flush);
          pending += text;
        },
        onReasoning: (text) => {
          if (!pending && !reasoning) setImmediate(flush);
          reasoning += text;
        },
      });
      flush();
      const next = job.apply(out);
      await completeTurn(this.db, {
        sessionId,
        replyId,
        content: next.content,
        rawContent: next.raw,
        stateChanges: JSON.stringify(out.result.stateChanges),
        state: JSON.stringify(out.result.state),
        swipes: JSON.stringify(next.swipes),
        activeSwipeIndex: next.active,
        ...replyFigures(out),
        lockToken: job.lockToken,
      });
      const { rows } = await this.db.query<MessageRow & Record<string, unknown>>('select * from chat_messages where id = $1', [replyId]);
      await this.emit(sessionId, 'reply:done', {
        message: rows[0] ? messageView(rows[0]) : null,
        state: out.result.state,
        notifications: out.result.notifications,
        audioCommands: out.result.audioCommands,
        aiRequests: out.result.aiRequests,
      });
    } catch (err) {
      flush();
      const stopped = controller.signal.aborted;
      const shown = stopped ? { code: 'AI_ABORTED', message: 'Stopped before the reply was finished.' } : publicErrorOf(err);
      if (!stopped) this.ctx.log.warn({ err, sessionId, messageId: replyId }, 'room reply failed');
      await markTurnFailed(this.ctx, { sessionId, replyId, fresh: job.fresh, code: shown.code, message: shown.message, lockToken: job.lockToken });
      await this.emit(sessionId, 'reply:error', { messageId: replyId, code: shown.code, message: shown.message, stopped });
    }
  }

  async close(): Promise<void> {
    for (const timer of [...this.#timers.values(), ...this.#rechecks.values()]) clearTimeout(timer);
    this.#timers.clear();
    this.#rechecks.clear();
    if (this.#sweep) clearInterval(this.#sweep);
    for (const controller of this.#running.values()) controller.abort(new Error('The server is shutting down'));
    await this.#ready.then((off) => (off as () => Promise<void>)()).catch(() => {});
  }
}

const perContext = new WeakMap<AppContext, RoomRuntime>();

/** The replica's rooms (one per context: one per process in production). */
export function roomRuntimeOf(ctx: AppContext): RoomRuntime {
  let runtime = perContext.get(ctx);
  if (!runtime) {
    runtime = new RoomRuntime(ctx);
    perContext.set(ctx, runtime);
  }
  return runtime;
}
