import { connect as netConnect } from 'node:net';
import pg from 'pg';
import { currentDeadlineMs } from './deadline.ts';
import { DbClientReleasedError, DbPoolTimeoutError, DbQueryTimeoutError, DbUnsupportedQueryError } from './errors.ts';

export type Row = Record<string, unknown>;
export type QueryResult<R extends Row = Row> = pg.QueryResult<R>;
export type QueryText = string | { text: string; values?: unknown[]; name?: string };

/** Server-side limits every new connection carries (seed 000 §2.1): closing a socket does not cancel server work at once. */
export const SESSION_SETTINGS = {
  statement_timeout: '300000',
  lock_timeout: '20000',
  idle_in_transaction_session_timeout: '60000',
} as const;

export interface PoolPressure {
  pool: string;
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface QueryObserver {
  /** Called once per query with its duration; must not throw (errors are swallowed). */
  query?(pool: string, durationMs: number, ok: boolean, text: string): void;
}

export interface PoolOptions {
  name: string;
  connectionString: string;
  max: number;
  /** The ordinary client-side query deadline (DATABASE_QUERY_TIMEOUT_MS). */
  queryTimeoutMs: number;
  /** Connect and acquire timeout, separate from the query deadline. */
  connectTimeoutMs: number;
  observer?: QueryObserver;
  /**
   * Whether a query's `name` makes it a named prepared statement (parsed and planned once per
   * connection: the hot statements of a turn). Default true; off for the embedded database, whose
   * connections share one backend (the name is dropped and the query runs unnamed).
   */
  preparedStatements?: boolean;
}

/** Anything that runs SQL: a pool, or one borrowed client (for transactions). */
export interface Queryable {
  query<R extends Row = Row>(text: QueryText, values?: unknown[]): Promise<QueryResult<R>>;
}

const SQLSTATE_CONNECTION_LOST = /^(08|57P)/;

function assertPlainQuery(text: unknown): asserts text is QueryText {
  if (typeof text === 'string') return;
  if (text && typeof text === 'object') {
    if (typeof (text as { submit?: unknown }).submit === 'function') {
      throw new DbUnsupportedQueryError('Cursor and submittable query objects');
    }
    if (typeof (text as { text?: unknown }).text === 'string') return;
  }
  throw new DbUnsupportedQueryError('Queries other than SQL text');
}

/** A client whose connection state can no longer be trusted is discarded, never returned to the pool. */
function isConnectionLoss(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return SQLSTATE_CONNECTION_LOST.test(code);
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|ECONNRESET|EPIPE|not queryable|socket/i.test(message);
}

/**
 * One borrowed connection. After a deadline fires, the socket is force-closed, every later
 * command fails with the original DB_QUERY_TIMEOUT without reaching the server, and release()
 * discards the client instead of returning it.
 */
export class DbClient implements Queryable {
  #raw: pg.PoolClient;
  #broken: unknown = undefined;
  #released = false;

  constructor(
    raw: pg.PoolClient,
    private readonly owner: DbPool,
  ) {
    this.#raw = raw;
  }

  /** The error that made this client unusable, if any. */
  get brokenBy(): unknown {
    return this.#broken;
  }

  query<R extends Row = Row>(text: QueryText, values?: unknown[]): Promise<QueryResult<R>> {
    // Capture the deadline synchronously, at submission.
    const deadline = currentDeadlineMs(this.owner.queryTimeoutMs);
    try {
      assertPlainQuery(text);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.submit<R>(text, values, deadline);
  }

  /** @internal Runs a checked query under a deadline captured by the caller at its submission. */
  submit<R extends Row>(text: QueryText, values: unknown[] | undefined, deadlineMs: number): Promise<QueryResult<R>> {
    if (this.#released) return Promise.reject(new DbClientReleasedError());
    if (this.#broken !== undefined) return Promise.reject(this.#broken);
    return this.#run<R>(text, values, deadlineMs);
  }

  #run<R extends Row>(text: QueryText, values: unknown[] | undefined, deadlineMs: number): Promise<QueryResult<R>> {
    const raw = this.#raw;
    const started = this.owner.observed ? performance.now() : 0;
    const sql = typeof text === 'string' ? text : text.text;
    return new Promise<QueryResult<R>>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        // Several commands in flight: the first deadline breaks the client; the others answer with its error.
        if (this.#broken !== undefined) return reject(this.#broken);
        const err = new DbQueryTimeoutError(deadlineMs, this.owner.name);
        // Intercept before anything else can release or roll back: mark first, then cut the socket.
        this.#broken = err;
        this.owner.abandon(raw);
        this.owner.observe(performance.now() - started, false, sql);
        reject(err);
      }, deadlineMs);
      const query =
        typeof text === 'string'
          ? raw.query<R>(text, values)
          : raw.query<R>(this.owner.preparedStatements ? { ...text, values: values ?? text.values } : { text: text.text, values: values ?? text.values });
      query.then(
        (result) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          this.owner.observe(performance.now() - started, true, sql);
          resolve(result);
        },
        (err: unknown) => {
          if (settled) return; // the deadline already answered; this is the socket we closed
          settled = true;
          clearTimeout(timer);
          this.owner.observe(performance.now() - started, false, sql);
          // Another command's deadline closed the socket under this one: the original error, never overwritten.
          if (this.#broken !== undefined) return reject(this.#broken);
          if (isConnectionLoss(err)) this.#broken = err;
          reject(err);
        },
      );
    });
  }

  /** Returns a healthy client to the pool; discards one that timed out or lost its connection. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    const broken = this.#broken ?? (this.owner.isDead(this.#raw) ? new Error('connection lost') : undefined);
    if (broken !== undefined) this.#raw.release(broken instanceof Error ? broken : new Error(String(broken)));
    else this.#raw.release();
  }
}

/**
 * A pg.Pool behind the deadline contract of seed 000: per-query client-side deadlines from the
 * current scope, timed-out clients force-closed and discarded, session limits on every
 * connection, cursors refused.
 */
export class DbPool implements Queryable {
  readonly name: string;
  readonly queryTimeoutMs: number;
  readonly max: number;
  readonly preparedStatements: boolean;
  readonly #pool: pg.Pool;
  readonly #connectTimeoutMs: number;
  readonly #observer: QueryObserver | undefined;
  readonly #dead = new WeakSet<pg.PoolClient>();
  readonly #target: { host: string; port: number };

  constructor(options: PoolOptions) {
    this.name = options.name;
    this.queryTimeoutMs = options.queryTimeoutMs;
    this.max = options.max;
    this.preparedStatements = options.preparedStatements ?? true;
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.#observer = options.observer;
    const settings = Object.entries(SESSION_SETTINGS)
      .map(([k, v]) => `-c ${k}=${v}`)
      .join(' ');
    this.#pool = new pg.Pool({
      connectionString: options.connectionString,
      max: options.max,
      connectionTimeoutMillis: options.connectTimeoutMs,
      idleTimeoutMillis: 30_000,
      options: settings,
    });
    const url = new URL(options.connectionString);
    this.#target = { host: url.hostname || '127.0.0.1', port: Number(url.port || 5432) };
    // Idle clients whose server goes away emit 'error' on the pool; without a listener that would crash the process.
    this.#pool.on('error', () => {});
    this.#pool.on('connect', (client) => {
      client.on('error', () => this.#dead.add(client as pg.PoolClient));
      client.on('end', () => this.#dead.add(client as pg.PoolClient));
    });
  }

  /** Borrows a client; the caller must release() it. Waiting is bounded by the acquire timeout, not the query deadline. */
  async connect(): Promise<DbClient> {
    let raw: pg.PoolClient;
    try {
      raw = await this.#pool.connect();
    } catch (err) {
      if (err instanceof Error && /timeout exceeded when trying to connect/i.test(err.message)) {
        throw new DbPoolTimeoutError(this.#connectTimeoutMs, this.name, { cause: err });
      }
      throw err;
    }
    return new DbClient(raw, this);
  }

  async query<R extends Row = Row>(text: QueryText, values?: unknown[]): Promise<QueryResult<R>> {
    assertPlainQuery(text);
    // Capture the submitter's deadline now, before waiting for a client.
    const deadline = currentDeadlineMs(this.queryTimeoutMs);
    const client = await this.connect();
    try {
      return await client.submit<R>(text, values, deadline);
    } finally {
      client.release();
    }
  }

  /**
   * Runs fn inside BEGIN/COMMIT on one client. An ordinary error rolls back and the client is
   * reused; after a deadline the client is discarded without a rollback (its socket is gone) and
   * the original DB_QUERY_TIMEOUT propagates. `{ snapshot: true }` makes it a read-only
   * REPEATABLE READ transaction: every statement in it sees the database as of its first one (two
   * reads that must agree, such as a session's state and its messages, while a turn commits).
   */
  async transaction<T>(fn: (tx: DbClient) => Promise<T>, options: { snapshot?: boolean } = {}): Promise<T> {
    const client = await this.connect();
    try {
      await client.query(options.snapshot ? 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY' : 'BEGIN');
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      if (client.brokenBy === undefined) {
        try {
          await client.query('ROLLBACK');
        } catch {
          // the release below discards the client if the rollback broke it
        }
      }
      throw err;
    } finally {
      client.release();
    }
  }

  pressure(): PoolPressure {
    return {
      pool: this.name,
      total: this.#pool.totalCount,
      idle: this.#pool.idleCount,
      waiting: this.#pool.waitingCount,
      max: this.max,
    };
  }

  async end(): Promise<void> {
    await this.#pool.end();
  }

  /** @internal */
  isDead(raw: pg.PoolClient): boolean {
    return this.#dead.has(raw);
  }

  /** @internal Force-closes a client's socket and asks the server to cancel its running statement. */
  abandon(raw: pg.PoolClient): void {
    this.#dead.add(raw);
    const internals = raw as unknown as { processID?: number | null; secretKey?: number | null; connection?: { stream?: { destroy(): void } } };
    try {
      internals.connection?.stream?.destroy();
    } catch {
      // already gone
    }
    if (typeof internals.processID === 'number' && typeof internals.secretKey === 'number') {
      sendCancelRequest(this.#target.host, this.#target.port, internals.processID, internals.secretKey);
    }
  }

  /** @internal */
  get observed(): boolean {
    return this.#observer?.query !== undefined;
  }

  /** @internal */
  observe(durationMs: number, ok: boolean, text: string): void {
    if (!this.#observer?.query) return;
    try {
      this.#observer?.query?.(this.name, durationMs, ok, text);
    } catch {
      // telemetry never throws into the application
    }
  }
}

/** The protocol's CancelRequest, best effort: the backend stops at once instead of at statement_timeout. */
function sendCancelRequest(host: string, port: number, pid: number, secret: number): void {
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(80877102, 4);
  message.writeInt32BE(pid, 8);
  message.writeInt32BE(secret, 12);
  const socket = netConnect({ host, port });
  socket.setTimeout(2_000, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  socket.on('connect', () => socket.end(message));
}
