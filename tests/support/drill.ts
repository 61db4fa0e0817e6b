import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DbPool, runMigrations } from '@yumina/db';
import { grantCredits, settleAbandonedReservations } from '@yumina/billing';
import { containerSettings } from './container-settings.ts';
import { startFakeOpenAi } from './fake-openai.ts';
import { sampleWorld } from './player-world.ts';
import { OwnPostgres } from './postgres-server.ts';
import { OwnRedis } from './redis-server.ts';
import { type Replica, startReplica } from './replica.ts';
import { Browser } from './http-client.ts';
import { signUp } from './sign-up.ts';
import { INTERNAL_DETAIL, parseEvents } from './collector.ts';

/**
 * The chaos drill (issue 51, point 3; `npm run drill` in full, tests/drill.test.ts in short): on a
 * PostgreSQL and a Redis of its own and two container replicas behind a client-side balancer that
 * does what the load balancer does (round robin over the replicas that answer, a failed connection
 * tried on the other), simulated players send turns on platform credits and each hold a stream (the
 * live overview of their world) while the drill restarts PostgreSQL, restarts Redis and kills a
 * replica with SIGKILL (then starts a new one, as ECS replaces a task). Every attempt a client makes
 * ends in one of: a reply that ended with `done` (acknowledged), an error it was told (an HTTP
 * error with the shared error body, an SSE `error` event, a refused or reset connection), or a hang
 * (no answer within HANG_MS): the drill's figure that must stay 0. Afterwards it checks that every
 * acknowledged turn is in the history with its reply, no reply is left `streaming`, no session's
 * lock is held, every player's next turn succeeds, and each account's credits equal its ledger.
 */

export interface DrillOptions {
  players: number;
  /** Seconds of steady load before the first fault, and between faults. */
  settleS: number;
  /** How long PostgreSQL and Redis stay down, and a killed replica stays away (ms). */
  downMs: number;
  /** How long one reply streams (ms). */
  replyMs: number;
  log?: (line: string) => void;
}

export interface FaultFigures {
  fault: string;
  /** When it began, seconds after the load started. */
  atS: number;
  /** Errors clients were told while it lasted and until every player had a reply again, by kind. */
  errors: Record<string, number>;
  /** From the fault's start until the first reply acknowledged after it (ms). */
  firstReplyMs: number;
  /** From the fault's start until every player had a reply acknowledged after it (ms); null: some never did. */
  allRecoveredMs: number | null;
}

export interface DrillReport {
  players: number;
  turnsAcknowledged: number;
  attempts: number;
  errors: Record<string, number>;
  hangs: number;
  /** Error bodies that carried internal detail or were not the shared shape. */
  unclean: string[];
  streams: { opened: number; toldReconnect: number; dropped: number; hangs: number };
  faults: FaultFigures[];
  after: {
    lostAcknowledged: number;
    streamingLeft: number;
    locksHeld: number;
    nextTurnFailed: number;
    openReservationsBeforeSettle: number;
    ledgerMismatches: number;
    chargesWithoutOneUsageRow: number;
  };
}

const HANG_MS = 30_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the load balancer does for the drill's clients: round robin over the replicas that answer. */
class Balancer {
  #next = 0;
  readonly #down = new Set<string>();
  constructor(public replicas: Replica[]) {}
  pick(): string {
    const up = this.replicas.filter((r) => !this.#down.has(r.url));
    const list = up.length ? up : this.replicas;
    return list[this.#next++ % list.length]!.url;
  }
  /** A connection to `url` failed: out of rotation until it answers /health/live again. */
  failed(url: string): void {
    if (this.#down.has(url)) return;
    this.#down.add(url);
    void (async () => {
      while (this.#down.has(url) && this.replicas.some((r) => r.url === url)) {
        await sleep(250);
        if (await fetch(`${url}/health/live`, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false)) this.#down.delete(url);
      }
      this.#down.delete(url);
    })();
  }
}

interface Player {
  index: number;
  address: string;
  cookies: Map<string, string>;
  accountId: string;
  worldId: string;
  sessionId: string;
  /** The messages whose reply ended with `done`. */
  acknowledged: string[];
  lastAckAt: number;
}

/** A client that goes wherever the balancer sends it, with the player's cookies and address (X-Forwarded-For, as the load balancer names it). */
function client(balancer: Balancer, player: Pick<Player, 'cookies' | 'address'>): (path: string, init?: RequestInit & { json?: unknown }) => Promise<{ res: Response; url: string }> {
  return async (path, init = {}) => {
    const url = balancer.pick();
    const b = new Browser(url);
    b.cookies = player.cookies;
    const headers = new Headers(init.headers);
    headers.set('x-forwarded-for', player.address);
    try {
      return { res: await b.fetch(path, { ...init, headers }), url };
    } catch (err) {
      balancer.failed(url);
      throw err;
    }
  };
}

const REPLY = 'The lantern swings, and the passage bends toward a sound of water. ';

export async function runDrill(options: DrillOptions): Promise<DrillReport> {
  const log = options.log ?? (() => {});
  const work = mkdtempSync(join(tmpdir(), 'yumina-drill-'));
  mkdirSync(join(work, 'outbox'));
  const [postgres, redis, provider] = await Promise.all([OwnPostgres.start(), OwnRedis.start(), startFakeOpenAi({ apiKey: 'sk-drill' })]);
  const chunks = 10;
  provider.setHandler(() => ({ kind: 'completion', content: REPLY, chunks, chunkDelayMs: Math.round(options.replyMs / chunks), usage: { prompt_tokens: 400, completion_tokens: 40 } }));
  const databaseUrl = postgres.url.replace(/\/postgres$/, '/drill');
  const setup = new DbPool({ name: 'primary', connectionString: postgres.url, max: 1, queryTimeoutMs: 30_000, connectTimeoutMs: 5_000 });
  await setup.query('create database drill');
  await setup.end();
  const db = new DbPool({ name: 'primary', connectionString: databaseUrl, max: 4, queryTimeoutMs: 30_000, connectTimeoutMs: 5_000 });
  await runMigrations(db, resolve(import.meta.dirname, '../../migrations'));

  // container mode's settings, on the drill's own Redis, mail to the drill's folder
  const outbox = join(work, 'outbox');
  const env: Record<string, string> = {
    ...containerSettings('http://localhost:3000', redis.url),
    MAIL_OUTBOX_DIR: outbox,
    LOG_LEVEL: 'fatal',
    DATA_DIR: join(work, 'data'),
    DATABASE_URL: databaseUrl,
    DATABASE_POOL_MAX: '10',
    AI_PRIVATE_NETWORK_ACCESS: 'allow',
    OFFICIAL_AI_BASE_URL: provider.url,
    OFFICIAL_AI_API_KEY: 'sk-drill',
    OFFICIAL_AI_MODEL: 'drill-model',
    PASSWORD_HASH_COST: '10',
    SIGNUP_RATE_LIMIT_PER_HOUR: '100000',
    PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: '100000',
    TRUST_PROXY: 'loopback',
    NODE_ENV: 'test',
  };
  const replicas: Replica[] = [];
  let stopping = false;
  const report: DrillReport = {
    players: options.players,
    turnsAcknowledged: 0,
    attempts: 0,
    errors: {},
    hangs: 0,
    unclean: [],
    streams: { opened: 0, toldReconnect: 0, dropped: 0, hangs: 0 },
    faults: [],
    after: { lostAcknowledged: 0, streamingLeft: 0, locksHeld: 0, nextTurnFailed: 0, openReservationsBeforeSettle: 0, ledgerMismatches: 0, chargesWithoutOneUsageRow: 0 },
  };
  try {
    replicas.push(...(await Promise.all(['replica-1', 'replica-2'].map((name) => startReplica(name, env)))));
    const balancer = new Balancer(replicas);
    log(`drill: PostgreSQL ${postgres.version} on :${postgres.port}, Redis on :${redis.port}, replicas ${replicas.map((r) => r.url).join(', ')}`);

    // The players: each signed up (through the mailed link), on platform credits, with a world and a session.
    const world = sampleWorld('ashen-depths');
    const players: Player[] = [];
    const queue = Array.from({ length: options.players }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const address = `198.18.${Math.floor(i / 250)}.${(i % 250) + 1}`;
          const b = new Browser(replicas[i % 2]!.url);
          await signUp({ url: b.base, outbox }, b, { email: `drill-${i}@example.com`, headers: { 'x-forwarded-for': address } });
          const player = { index: i, address, cookies: b.cookies, accountId: '', worldId: '', sessionId: '', acknowledged: [], lastAckAt: 0 };
          const call = client(balancer, player);
          player.accountId = ((await (await call('/api/auth/session')).res.json()) as { account: { id: string } }).account.id;
          await grantCredits(db, player.accountId, 1_000_000, null, 'drill');
          await call('/api/billing/preference', { method: 'PUT', json: { preference: 'official' } });
          player.worldId = ((await (await call('/api/worlds', { method: 'POST', json: { world } })).res.json()) as { id: string }).id;
          player.sessionId = ((await (await call(`/api/worlds/${player.worldId}/sessions`, { method: 'POST' })).res.json()) as { session: { id: string } }).session.id;
          players.push(player);
        }
      }),
    );
    log(`drill: ${players.length} players signed up, each with credits, a world and a session`);

    const started = performance.now();
    const now = () => performance.now() - started;
    const told = (kind: string) => {
      report.errors[kind] = (report.errors[kind] ?? 0) + 1;
      for (const f of report.faults) if (f.allRecoveredMs === null) f.errors[kind] = (f.errors[kind] ?? 0) + 1;
    };
    const checkBody = (text: string, what: string) => {
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
      const e = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
      if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || INTERNAL_DETAIL.test(text)) report.unclean.push(`${what}: ${text.slice(0, 200)}`);
      return typeof e?.code === 'string' ? e.code : 'unknown';
    };

    /** One turn attempt: acknowledged (true) or what the client was told (false). */
    const attempt = async (player: Player, content: string): Promise<boolean> => {
      const call = client(balancer, player);
      report.attempts++;
      const abort = AbortSignal.timeout(HANG_MS);
      let res: Response;
      try {
        res = (await call(`/api/sessions/${player.sessionId}/messages`, { method: 'POST', json: { content }, signal: abort })).res;
      } catch {
        if (abort.aborted) report.hangs++;
        told(abort.aborted ? 'hang' : 'connection failed');
        return false;
      }
      if (res.status !== 200) {
        const code = checkBody(await res.text().catch(() => ''), `turn ${res.status}`);
        told(`${res.status} ${code}`);
        if (code === 'SESSION_BUSY') await call(`/api/sessions/${player.sessionId}/stop`, { method: 'POST' }).catch(() => told('connection failed'));
        const after = Number(res.headers.get('retry-after'));
        await sleep(after > 0 ? Math.min(after, 5) * 1000 : 500);
        return false;
      }
      let text: string;
      try {
        text = await res.text();
      } catch {
        if (abort.aborted) report.hangs++;
        told(abort.aborted ? 'hang' : 'stream cut');
        return false;
      }
      const events = parseEvents(text);
      const last = events.at(-1);
      if (last?.event === 'done') {
        player.acknowledged.push(content);
        player.lastAckAt = now();
        report.turnsAcknowledged++;
        return true;
      }
      if (last?.event === 'error') {
        const data = last.data as { code?: string; message?: string };
        if (typeof data.code !== 'string' || typeof data.message !== 'string' || INTERNAL_DETAIL.test(JSON.stringify(data))) report.unclean.push(`turn error event: ${JSON.stringify(data).slice(0, 200)}`);
        told(`event ${data.code ?? 'error'}`);
      } else told('stream cut');
      await sleep(300);
      return false;
    };

    // Each player: turns one after another (a short pause between), and the live overview stream held open.
    let turnNo = 0;
    const loops = players.map(async (player) => {
      await sleep(Math.random() * 1000);
      while (!stopping) {
        await attempt(player, `I walk on (${++turnNo})`);
        await sleep(200 + Math.random() * 300);
      }
    });
    const streams = players.map(async (player) => {
      const call = client(balancer, player);
      while (!stopping) {
        const stop = new AbortController();
        try {
          const { res } = await call(`/api/worlds/${player.worldId}/updates/events`, { signal: stop.signal });
          if (res.status !== 200) {
            checkBody(await res.text(), `stream ${res.status}`);
            await sleep(1000);
            continue;
          }
          report.streams.opened++;
          const reader = res.body!.getReader();
          const decoder = new TextDecoder();
          let seen = '';
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            seen += decoder.decode(value, { stream: true });
            if (stopping) stop.abort();
          }
          if (/event: reconnect/.test(seen)) report.streams.toldReconnect++;
          else report.streams.dropped++;
        } catch {
          if (!stopping) report.streams.dropped++;
        }
        await sleep(200 + Math.random() * 300);
      }
    });

    // The faults, each after `settleS` of steady load.
    const fault = async (name: string, act: () => Promise<void>) => {
      await sleep(options.settleS * 1000);
      const at = now();
      const figures: FaultFigures = { fault: name, atS: Math.round(at / 100) / 10, errors: {}, firstReplyMs: -1, allRecoveredMs: null };
      report.faults.push(figures);
      log(`drill: ${name} at ${figures.atS} s`);
      await act();
      const until = performance.now() + 120_000;
      while (performance.now() < until) {
        const after = players.filter((p) => p.lastAckAt > at);
        if (figures.firstReplyMs < 0 && after.length) figures.firstReplyMs = Math.round(Math.min(...after.map((p) => p.lastAckAt)) - at);
        if (after.length === players.length) {
          figures.allRecoveredMs = Math.round(Math.max(...after.map((p) => p.lastAckAt)) - at);
          break;
        }
        await sleep(100);
      }
    };
    await fault('PostgreSQL restarted', async () => {
      await postgres.stop();
      await sleep(options.downMs);
      await postgres.start();
    });
    await fault('Redis restarted', async () => {
      await redis.stop();
      await sleep(options.downMs);
      await redis.start();
    });
    await fault('replica killed (SIGKILL)', async () => {
      const victim = replicas[0]!;
      victim.child.kill('SIGKILL');
      await sleep(options.downMs);
      // ECS starts a new task in its place
      const fresh = await startReplica('replica-3', env);
      replicas.splice(0, 1, fresh);
    });
    await sleep(options.settleS * 1000);
    stopping = true;
    await Promise.all([...loops, ...streams]);

    // Afterwards: each player's next turn succeeds (a session left busy by the killed replica is stopped first, as the page offers).
    await Promise.all(
      players.map(async (player) => {
        let ok = false;
        for (let i = 0; i < 4 && !ok; i++) ok = await attempt(player, 'And after the storm?');
        if (!ok) report.after.nextTurnFailed++;
      }),
    );
    // Nothing acknowledged is lost: every acknowledged message is in its session's history, answered by a complete reply.
    for (const player of players) {
      const { rows } = await db.query<{ role: string; content: string; status: string }>(`select role, content, status from chat_messages where session_id = $1 order by position`, [player.sessionId]);
      for (const ack of player.acknowledged) {
        const i = rows.findIndex((r) => r.role === 'user' && r.content === ack);
        if (i < 0 || rows[i + 1]?.role !== 'assistant' || rows[i + 1]?.status !== 'complete' || rows[i + 1]?.content !== REPLY) report.after.lostAcknowledged++;
      }
    }
    const ids = players.map((p) => p.sessionId);
    report.after.streamingLeft = Number((await db.query<{ n: string }>(`select count(*) as n from chat_messages where session_id = any($1) and status = 'streaming'`, [ids])).rows[0]!.n);
    report.after.locksHeld = Number((await db.query<{ n: string }>(`select count(*) as n from chat_sessions where id = any($1) and turn_token is not null and turn_until > now()`, [ids])).rows[0]!.n);
    // Credits: what maintenance settles later (reservations of turns that died with their replica), settled now; then each balance is its ledger's sum and every charge has one usage row.
    const accounts = players.map((p) => p.accountId);
    report.after.openReservationsBeforeSettle = Number((await db.query<{ n: string }>(`select count(*) as n from credit_reservations where account_id = any($1) and status = 'reserved'`, [accounts])).rows[0]!.n);
    await settleAbandonedReservations(db, 0);
    report.after.ledgerMismatches = Number(
      (
        await db.query<{ n: string }>(
          `select count(*) as n from billing_accounts b where b.account_id = any($1) and b.credits <> (select coalesce(sum(amount), 0) from credit_ledger l where l.account_id = b.account_id)`,
          [accounts],
        )
      ).rows[0]!.n,
    );
    report.after.chargesWithoutOneUsageRow = Number(
      (
        await db.query<{ n: string }>(
          `select count(*) as n from credit_ledger c where c.account_id = any($1) and c.kind = 'charge' and (select count(*) from usage_ledger u where u.reservation_id = c.reservation_id) <> 1`,
          [accounts],
        )
      ).rows[0]!.n,
    );
    return report;
  } finally {
    stopping = true;
    for (const r of replicas) r.child.kill('SIGKILL');
    await db.end().catch(() => {});
    await provider.close().catch(() => {});
    await Promise.all([postgres.destroy().catch(() => {}), redis.stop().catch(() => {})]);
    rmSync(work, { recursive: true, force: true });
  }
}

/** The report as the lines `npm run drill` prints. */
export function describeDrill(r: DrillReport): string[] {
  return [
    `drill: ${r.players} players, ${r.attempts} turn attempts, ${r.turnsAcknowledged} acknowledged; told ${JSON.stringify(r.errors)}; hangs ${r.hangs}; unclean error bodies ${r.unclean.length}`,
    `drill: streams opened ${r.streams.opened}, ended with a reconnect event ${r.streams.toldReconnect}, cut ${r.streams.dropped}`,
    ...r.faults.map((f) => `drill: ${f.fault} at ${f.atS} s: first reply ${f.firstReplyMs} ms after, every player again after ${f.allRecoveredMs ?? 'never'} ms; told ${JSON.stringify(f.errors)}`),
    `drill: afterwards: acknowledged turns lost ${r.after.lostAcknowledged}, replies left streaming ${r.after.streamingLeft}, locks held ${r.after.locksHeld}, next turn failed ${r.after.nextTurnFailed}, ` +
      `open reservations settled ${r.after.openReservationsBeforeSettle}, balances unequal to the ledger ${r.after.ledgerMismatches}, charges without one usage row ${r.after.chargesWithoutOneUsageRow}`,
  ];
}

/** What the drill requires, as sentences (empty: passed). */
export function drillFailures(r: DrillReport): string[] {
  const out: string[] = [];
  if (r.hangs) out.push(`${r.hangs} turns waited ${HANG_MS / 1000} s without an answer`);
  if (r.streams.hangs) out.push(`${r.streams.hangs} streams hung`);
  const internal = Object.entries(r.errors).filter(([kind]) => /INTERNAL|^5\d\d (?!SERVER_BUSY|DB_UNAVAILABLE|STORE_UNAVAILABLE)/.test(kind));
  if (internal.length) out.push(`clients were told of failures they cannot act on: ${JSON.stringify(Object.fromEntries(internal))}`);
  if (r.unclean.length) out.push(`error bodies not in the shared shape or with internal detail: ${r.unclean.slice(0, 3).join(' | ')}`);
  for (const f of r.faults) if (f.allRecoveredMs === null) out.push(`after "${f.fault}" not every player had a reply again within 120 s`);
  const a = r.after;
  if (a.lostAcknowledged) out.push(`${a.lostAcknowledged} acknowledged turns are not in their history`);
  if (a.streamingLeft) out.push(`${a.streamingLeft} replies left streaming`);
  if (a.locksHeld) out.push(`${a.locksHeld} sessions still locked`);
  if (a.nextTurnFailed) out.push(`${a.nextTurnFailed} players could not play a turn afterwards`);
  if (a.ledgerMismatches) out.push(`${a.ledgerMismatches} balances differ from their ledger`);
  if (a.chargesWithoutOneUsageRow) out.push(`${a.chargesWithoutOneUsageRow} charges without exactly one usage row`);
  if (!r.turnsAcknowledged) out.push('no turn was acknowledged');
  return out;
}
