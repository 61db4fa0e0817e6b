/**
 * §6.1: the window-message bridge between the landing page (platform origin) and the framed
 * partner client. Browser-safe. Validators return the typed message or null; anything else is
 * dropped by the receiver without a reply.
 */

export const FRAME_MESSAGE_TYPES = [
  'platform:auth:request',
  'platform:auth:login',
  'platform:auth:logout',
  'platform:game:ready',
] as const;

export const PAGE_MESSAGE_TYPES = [
  'platform:auth:token',
  'platform:auth:unauthenticated',
  'platform:auth:error',
  'platform:auth:changed',
] as const;

/** Frame to page. */
export type FrameMessage =
  | { type: 'platform:auth:request'; requestId: string }
  | { type: 'platform:auth:login' }
  | { type: 'platform:auth:logout' }
  | { type: 'platform:game:ready' };

export type AuthErrorCode = 'temporarily_unavailable';

/** Page to frame. */
export type PageMessage =
  | { type: 'platform:auth:token'; requestId: string; token: string; expiresAt: string }
  | { type: 'platform:auth:unauthenticated'; requestId: string }
  | { type: 'platform:auth:error'; requestId: string; code: AuthErrorCode }
  | { type: 'platform:auth:changed' };

export const REQUEST_ID_MAX_LENGTH = 128;
const TOKEN_MAX_LENGTH = 16_384;
const REQUEST_ID = /^[\x21-\x7e]+$/; // printable ASCII, no spaces
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isRequestId(value: unknown): value is string {
  return typeof value === 'string' && value.length <= REQUEST_ID_MAX_LENGTH && REQUEST_ID.test(value);
}

/** A fresh opaque request id. */
export function newRequestId(): string {
  return globalThis.crypto.randomUUID();
}

/** Validates a message received by the page. Extra fields are ignored and not copied. */
export function parseFrameMessage(data: unknown): FrameMessage | null {
  if (!isRecord(data) || typeof data.type !== 'string') return null;
  switch (data.type) {
    case 'platform:auth:request':
      return isRequestId(data.requestId) ? { type: data.type, requestId: data.requestId } : null;
    case 'platform:auth:login':
    case 'platform:auth:logout':
    case 'platform:game:ready':
      return { type: data.type };
    default:
      return null;
  }
}

/** Validates a message received by the frame. Extra fields are ignored and not copied. */
export function parsePageMessage(data: unknown): PageMessage | null {
  if (!isRecord(data) || typeof data.type !== 'string') return null;
  switch (data.type) {
    case 'platform:auth:token': {
      const { requestId, token, expiresAt } = data;
      if (!isRequestId(requestId)) return null;
      if (typeof token !== 'string' || token.length > TOKEN_MAX_LENGTH || !JWT.test(token)) return null;
      if (typeof expiresAt !== 'string' || Number.isNaN(Date.parse(expiresAt))) return null;
      return { type: data.type, requestId, token, expiresAt };
    }
    case 'platform:auth:unauthenticated':
      return isRequestId(data.requestId) ? { type: data.type, requestId: data.requestId } : null;
    case 'platform:auth:error':
      return isRequestId(data.requestId) && data.code === 'temporarily_unavailable'
        ? { type: data.type, requestId: data.requestId, code: data.code }
        : null;
    case 'platform:auth:changed':
      return { type: data.type };
    default:
      return null;
  }
}
