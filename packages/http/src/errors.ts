/** An error a route throws to answer with a specific status and the shared error shape. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    /** A body to send instead of the error shape (e.g. a 422 validation result). */
    readonly body?: unknown,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface ErrorBody {
  error: { code: string; message: string };
}

/** Message of seed 000 §7 for a query that outlived its deadline: the outcome is unknown. */
export const QUERY_TIMEOUT_MESSAGE =
  'The database took too long to answer, so we do not know whether your change was saved. Refresh the page and check before trying again.';

/** The database restarting or unreachable (unavailable): nothing may have been saved, or the last statement may have been. */
export const DB_UNAVAILABLE_MESSAGE =
  'The database is briefly unavailable. Please try again in a moment (if you were saving something, refresh first to see whether it was saved).';

/** SQLSTATEs of a server shutting down or restarting, of a lost connection and of a server refusing connections for now. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006', '53300']);
/** Socket errors of a database connection that could not be made or was cut. */
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ENOTCONN']);

/**
 * Whether `err` (or an error it wraps as its cause) says the database is restarting or unreachable
 * (a failover, a restart, a cut connection): a 503 the client can retry (DB_UNAVAILABLE), not a 500
 * (the chaos drill, issue 51). Errors of the AI providers carry their own codes (AI_…) and never
 * reach this test.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && (UNAVAILABLE_SQLSTATES.has(e.code) || UNAVAILABLE_ERRNOS.has(e.code))) return true;
    if (typeof e.message === 'string' && /^Connection terminated|not queryable|terminating connection/.test(e.message)) return true;
  }
  return false;
}

/**
 * The one table from stable error codes of the packages to HTTP answers. Errors not named here
 * answer with their own 4xx statusCode when they carry one, else 500 with no detail.
 */
const BY_CODE: Record<string, { status: number; message?: string }> = {
  DB_QUERY_TIMEOUT: { status: 503, message: QUERY_TIMEOUT_MESSAGE },
  DB_POOL_TIMEOUT: { status: 503, message: 'The service is busy right now. Please try again in a moment.' },
  STORE_UNAVAILABLE: { status: 503, message: 'A shared service is unavailable right now. Please try again in a moment.' },
  DB_UNSUPPORTED_QUERY: { status: 500 },
  AI_NO_PROVIDER: { status: 409 },
  AI_CONTENT_REFUSAL: { status: 422 },
  AI_ABORTED: { status: 409, message: 'The generation was stopped.' },
  AI_PROVIDER_AUTH: { status: 502, message: 'The AI provider refused the API key. Check your AI connection in settings.' },
  AI_PROVIDER_BAD_REQUEST: { status: 502, message: 'The AI provider rejected the request.' },
  AI_REASONING_REQUIRED: { status: 502, message: 'The AI model requires reasoning, which this request turned off.' },
  AI_PROVIDER_RATE_LIMITED: { status: 429, message: 'The AI provider is limiting requests right now. Try again shortly.' },
  AI_PROVIDER_UPSTREAM: { status: 502, message: 'The AI provider failed. Try again.' },
  AI_PROVIDER_TIMEOUT: { status: 504, message: 'The AI provider took too long to answer.' },
  AI_PROVIDER_UNREACHABLE: { status: 502, message: 'Could not reach the AI provider.' },
  AI_PROVIDER_INVALID_RESPONSE: { status: 502, message: 'The AI provider sent an answer that could not be read.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, message: 'Unsupported content type.' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, message: 'The request body is empty but should be JSON.' },
};

const FASTIFY_CODES_TO_OURS: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
};

export interface Answer {
  status: number;
  body: ErrorBody | unknown;
  headers: Record<string, string>;
}

export function toAnswer(err: unknown): Answer {
  if (err instanceof HttpError && err.body !== undefined) return { status: err.statusCode, body: err.body, headers: err.headers };
  const e = (err ?? {}) as { code?: unknown; statusCode?: unknown; message?: unknown; headers?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  // a provider's Retry-After (packages/ai: a native provider's 429 or overload) is passed on
  const retryAfter = (e as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  const headers = err instanceof HttpError ? err.headers : typeof retryAfter === 'number' ? { 'retry-after': String(retryAfter) } : {};
  const mapped = code ? BY_CODE[code] : undefined;
  if (!mapped && !(err instanceof HttpError) && !(code && /^AI_/.test(code)) && isDatabaseUnavailable(err)) {
    return { status: 503, body: { error: { code: 'DB_UNAVAILABLE', message: DB_UNAVAILABLE_MESSAGE } }, headers: { 'retry-after': '2' } };
  }
  if (mapped) {
    const status = mapped.status;
    if (status >= 500 && !mapped.message) return internal();
    return {
      status,
      body: { error: { code: FASTIFY_CODES_TO_OURS[code!] ?? code!, message: mapped.message ?? String(e.message) } },
      headers,
    };
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status >= 400 && status < 500) {
    const fallbackCode = status === 400 && err instanceof SyntaxError ? 'INVALID_JSON' : httpCodeName(status);
    const ours = code ? (FASTIFY_CODES_TO_OURS[code] ?? (code.startsWith('FST_') ? httpCodeName(status) : code)) : fallbackCode;
    return { status, body: { error: { code: ours, message: String(e.message ?? 'Bad request') } }, headers };
  }
  if (err instanceof HttpError) return { status, body: { error: { code: err.code, message: err.message } }, headers };
  return internal();
}

function internal(): Answer {
  return { status: 500, body: { error: { code: 'INTERNAL', message: 'Something went wrong on our side.' } }, headers: {} };
}

function httpCodeName(status: number): string {
  switch (status) {
    case 400:
      return 'BAD_REQUEST';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'FORBIDDEN';
    case 404:
      return 'NOT_FOUND';
    case 405:
      return 'METHOD_NOT_ALLOWED';
    case 409:
      return 'CONFLICT';
    case 413:
      return 'PAYLOAD_TOO_LARGE';
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 429:
      return 'RATE_LIMITED';
    default:
      return 'BAD_REQUEST';
  }
}

/**
 * What a client may be told about a failure that is reported inside a stream (SSE) rather than as
 * an HTTP answer: AI provider failures keep their own message (it holds only the provider's
 * `error.message` from an OpenAI-shaped error), client mistakes keep theirs, everything else is
 * the same code and human message the error handler would answer with — never a PostgreSQL code,
 * a Redis message or a stack.
 */
export function publicErrorOf(err: unknown): { code: string; message: string } {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  if (err instanceof Error && typeof e.code === 'string' && /^AI_/.test(e.code) && typeof e.message === 'string') {
    return { code: e.code, message: e.message };
  }
  const answer = toAnswer(err);
  const body = answer.body as Partial<ErrorBody> | undefined;
  return body?.error ?? { code: 'INTERNAL', message: 'Something went wrong on our side.' };
}
