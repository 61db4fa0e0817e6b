/**
 * Typed provider errors. Every one keeps the provider's HTTP status and its error body (raw text
 * and parsed JSON when it was JSON), so callers can tell a "reasoning required" 400 from a
 * malformed-request 400, and nothing the provider said is lost.
 */

export interface ProviderErrorDetails {
  /** HTTP status from the provider (200 for refusals and errors sent inside a stream). */
  status: number;
  /** The provider's error body as received. */
  bodyText: string;
  /** The parsed body when it was JSON. */
  body: unknown;
  /** The provider's own message, when one could be found. */
  providerMessage: string | null;
  /** Model the request was for. */
  model?: string;
}

export class AiProviderError extends Error {
  readonly code: string = 'AI_PROVIDER_ERROR';
  readonly status: number;
  readonly bodyText: string;
  readonly body: unknown;
  readonly providerMessage: string | null;
  readonly model: string | undefined;
  /** The provider's Retry-After in seconds (a 429, Anthropic's 529 overloaded), when it sent one. */
  retryAfterSeconds: number | null = null;

  constructor(details: ProviderErrorDetails, message?: string) {
    super(message ?? `AI provider answered ${details.status}${details.providerMessage ? `: ${details.providerMessage}` : ''}`);
    this.name = new.target.name;
    this.status = details.status;
    this.bodyText = details.bodyText;
    this.body = details.body;
    this.providerMessage = details.providerMessage;
    this.model = details.model;
  }
}

/** 401/403 on credentials: the key is wrong, revoked or lacks access. Never retried, never falls back. */
export class AiAuthError extends AiProviderError {
  override readonly code = 'AI_PROVIDER_AUTH';
}

/** A 400 (or 422) the provider blames on the request itself. Never retried, never falls back. */
export class AiBadRequestError extends AiProviderError {
  override readonly code = 'AI_PROVIDER_BAD_REQUEST';
}

/** A 400 because the routed model must reason while the request disabled reasoning. */
export class AiReasoningRequiredError extends AiProviderError {
  override readonly code = 'AI_REASONING_REQUIRED';
}

/** The model or the provider's moderation refused the content (a `refusal` on a 200, `content_filter`, or a moderation error). */
export class AiContentRefusalError extends AiProviderError {
  override readonly code = 'AI_CONTENT_REFUSAL';
}

/** 429. */
export class AiRateLimitError extends AiProviderError {
  override readonly code = 'AI_PROVIDER_RATE_LIMITED';
}

/** 5xx or an error event inside a stream. */
export class AiUpstreamError extends AiProviderError {
  override readonly code = 'AI_PROVIDER_UPSTREAM';
}

/**
 * Which deadline of a call passed: `total` (the whole call, CallOptions.timeoutMs), `first-byte`
 * (nothing of the answer arrived, CallOptions.firstByteTimeoutMs) or `idle` (the answer stopped
 * arriving part-way, CallOptions.idleTimeoutMs).
 */
export type AiDeadline = 'total' | 'first-byte' | 'idle';

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;

/** The request's deadline passed before the provider finished. Its message is shown to the player as it is. */
export class AiTimeoutError extends Error {
  readonly code = 'AI_PROVIDER_TIMEOUT';
  readonly deadline: AiDeadline;
  constructor(
    readonly timeoutMs: number,
    options?: { cause?: unknown; deadline?: AiDeadline },
  ) {
    const deadline = options?.deadline ?? 'total';
    super(
      deadline === 'first-byte'
        ? `The AI provider did not start answering within ${seconds(timeoutMs)}, so the reply was stopped. Try again, or choose another model.`
        : deadline === 'idle'
          ? `The AI provider stopped sending for ${seconds(timeoutMs)} in the middle of the reply, so it was stopped there. Try again.`
          : `The AI provider did not finish within ${seconds(timeoutMs)}.`,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'AiTimeoutError';
    this.deadline = deadline;
  }
}

/** The caller aborted the request (a user pressed stop, the socket went away). */
export class AiAbortedError extends Error {
  readonly code = 'AI_ABORTED';
  constructor(options?: { cause?: unknown }) {
    super('AI request aborted', options);
    this.name = 'AiAbortedError';
  }
}

/** The provider could not be reached (DNS, refused connection, reset). */
export class AiNetworkError extends Error {
  readonly code = 'AI_PROVIDER_UNREACHABLE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AiNetworkError';
  }
}

/** No usable provider for the account's billing preference (no private connection, no official key). */
export class AiNoProviderError extends Error {
  readonly code = 'AI_NO_PROVIDER';
  constructor(message: string) {
    super(message);
    this.name = 'AiNoProviderError';
  }
}

/** A 200 whose body is not a chat completion. */
export class AiInvalidResponseError extends Error {
  readonly code = 'AI_PROVIDER_INVALID_RESPONSE';
  constructor(message: string) {
    super(message);
    this.name = 'AiInvalidResponseError';
  }
}

const REASONING_REQUIRED = [
  /reasoning\b[^.]{0,60}\b(is )?(mandatory|required|cannot be disabled|can ?not be turned off|must be enabled)/i,
  /\brequires? reasoning\b/i,
  /\bthinking\b[^.]{0,40}\b(is )?(mandatory|required|cannot be disabled)/i,
];
const REFUSAL = [/\bflagged\b/i, /\bmoderation\b/i, /\bcontent[ _]?(policy|filter|management)\b/i, /\bsafety (system|filter)/i];
const REFUSAL_CODES = new Set(['content_filter', 'content_policy_violation', 'moderation', 'flagged', 'content_policy']);

/** A provider's own words, shown to the user: bounded, single-line, no control characters. */
function cleanMessage(text: string): string {
   
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

/**
 * The provider's message from an OpenAI-shaped JSON error (`{"error":{"message"}}`, or
 * `{"error":"…"}` as Ollama sends). Anything else (HTML, plain text, other JSON) yields no
 * message: the user never sees a raw body.
 */
function findMessage(body: unknown): { message: string | null; code: string | null } {
  if (!body || typeof body !== 'object') return { message: null, code: null };
  const error = (body as { error?: unknown }).error;
  if (typeof error === 'string') return { message: cleanMessage(error) || null, code: null };
  if (error && typeof error === 'object') {
    const e = error as { message?: unknown; code?: unknown; type?: unknown };
    const code = typeof e.code === 'string' ? e.code : typeof e.type === 'string' ? e.type : null;
    return { message: typeof e.message === 'string' ? cleanMessage(e.message) || null : null, code };
  }
  return { message: null, code: null };
}

/** Turns a provider error answer into the matching typed error. */
export function providerError(status: number, bodyText: string, model?: string): AiProviderError {
  let body: unknown = null;
  try {
    body = bodyText ? JSON.parse(bodyText) : null;
  } catch {
    body = null;
  }
  const { message, code } = findMessage(body);
  const text = message ?? bodyText;
  const details: ProviderErrorDetails = { status, bodyText, body, providerMessage: message, model };
  const refused = (code !== null && REFUSAL_CODES.has(code.toLowerCase())) || REFUSAL.some((r) => r.test(text));
  if (status === 400 && REASONING_REQUIRED.some((r) => r.test(text))) return new AiReasoningRequiredError(details);
  if ((status === 200 || status === 400 || status === 403 || status === 422) && refused) return new AiContentRefusalError(details);
  if (status === 401 || status === 403) return new AiAuthError(details);
  if (status === 400 || status === 404 || status === 413 || status === 422) return new AiBadRequestError(details);
  if (status === 429) return new AiRateLimitError(details);
  if (status >= 500 || status === 408) return new AiUpstreamError(details);
  return new AiProviderError(details);
}
