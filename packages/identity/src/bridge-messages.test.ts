import { describe, expect, it } from 'vitest';
import { parseFrameMessage, parsePageMessage } from './bridge-messages.ts';

const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln';

describe('bridge message validators', () => {
  it('accepts the frame messages and copies only known fields', () => {
    expect(parseFrameMessage({ type: 'platform:auth:request', requestId: 'r-1', extra: '<x>' })).toEqual({
      type: 'platform:auth:request',
      requestId: 'r-1',
    });
    expect(parseFrameMessage({ type: 'platform:auth:login' })).toEqual({ type: 'platform:auth:login' });
    expect(parseFrameMessage({ type: 'platform:auth:logout' })).toEqual({ type: 'platform:auth:logout' });
    expect(parseFrameMessage({ type: 'platform:game:ready' })).toEqual({ type: 'platform:game:ready' });
  });

  it('drops malformed frame messages', () => {
    for (const data of [
      null,
      'platform:auth:request',
      [],
      { type: 'platform:auth:request' },
      { type: 'platform:auth:request', requestId: '' },
      { type: 'platform:auth:request', requestId: 'a b' },
      { type: 'platform:auth:request', requestId: 'x'.repeat(129) },
      { type: 'platform:auth:request', requestId: 7 },
      { type: 'platform:auth:token', requestId: 'r', token: jwt, expiresAt: '2030-01-01T00:00:00Z' },
      { type: 'platform:other' },
    ]) {
      expect(parseFrameMessage(data)).toBeNull();
    }
  });

  it('accepts the page messages and drops malformed ones', () => {
    expect(parsePageMessage({ type: 'platform:auth:token', requestId: 'r', token: jwt, expiresAt: '2030-01-01T00:00:00.000Z' })).toEqual(
      { type: 'platform:auth:token', requestId: 'r', token: jwt, expiresAt: '2030-01-01T00:00:00.000Z' },
    );
    expect(parsePageMessage({ type: 'platform:auth:unauthenticated', requestId: 'r' })).toEqual({
      type: 'platform:auth:unauthenticated',
      requestId: 'r',
    });
    expect(parsePageMessage({ type: 'platform:auth:error', requestId: 'r', code: 'temporarily_unavailable' })).toMatchObject({
      code: 'temporarily_unavailable',
    });
    expect(parsePageMessage({ type: 'platform:auth:changed' })).toEqual({ type: 'platform:auth:changed' });
    for (const data of [
      { type: 'platform:auth:token', requestId: 'r', token: 'not a jwt', expiresAt: '2030-01-01T00:00:00Z' },
      { type: 'platform:auth:token', requestId: 'r', token: jwt, expiresAt: 'soon' },
      { type: 'platform:auth:token', token: jwt, expiresAt: '2030-01-01T00:00:00Z' },
      { type: 'platform:auth:error', requestId: 'r', code: 'logged_out' },
      { type: 'platform:auth:unauthenticated' },
      { type: 'platform:auth:request', requestId: 'r' },
    ]) {
      expect(parsePageMessage(data)).toBeNull();
    }
  });
});
