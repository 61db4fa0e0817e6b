/** A query outlived its client-side deadline. The statement may or may not have taken effect. */
export class DbQueryTimeoutError extends Error {
  readonly code = 'DB_QUERY_TIMEOUT';
  /** A lost COMMIT answer does not prove failure: callers must not assume either way, and never retry. */
  readonly outcome = 'unknown' as const;
  constructor(
    readonly timeoutMs: number,
    readonly pool: string,
  ) {
    super(`Database query exceeded its ${timeoutMs} ms deadline on the ${pool} pool; its outcome is unknown`);
    this.name = 'DbQueryTimeoutError';
  }
}

/** No connection could be had from the pool within the acquire timeout. Nothing was sent. */
export class DbPoolTimeoutError extends Error {
  readonly code = 'DB_POOL_TIMEOUT';
  constructor(
    readonly timeoutMs: number,
    readonly pool: string,
    options?: { cause?: unknown },
  ) {
    super(`No ${pool} database connection became free within ${timeoutMs} ms`, options);
    this.name = 'DbPoolTimeoutError';
  }
}

/** Cursors and other submittable query objects bypass the deadline machinery, so they are refused. */
export class DbUnsupportedQueryError extends Error {
  readonly code = 'DB_UNSUPPORTED_QUERY';
  constructor(what: string) {
    super(`${what} are not supported by the protected database pools; use plain parameterised SQL text`);
    this.name = 'DbUnsupportedQueryError';
  }
}

/** The client was released or discarded and cannot run more commands. */
export class DbClientReleasedError extends Error {
  readonly code = 'DB_CLIENT_RELEASED';
  constructor() {
    super('This database client was already released');
    this.name = 'DbClientReleasedError';
  }
}
