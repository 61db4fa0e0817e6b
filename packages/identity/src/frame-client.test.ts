import { describe, expect, it } from 'vitest';
import { deferred, FakeEventTarget, fakeJwt, flush, ManualTimers, RecordingWindow } from './bridge-test-doubles.ts';
import { createFrameClient, detectPlatformHost, type FrameClientOptions } from './frame-client.ts';

const PLATFORM = 'https://yumina.example';
const DEV = 'http://localhost:3000';
const FRAME_URL = 'https://client.game.example/play?host=platform';

function setup(overrides: Partial<FrameClientOptions<string>> = {}, href = FRAME_URL, referrer = '') {
  const parent = new RecordingWindow();
  const target = new FakeEventTarget();
  const timers = new ManualTimers();
  let ids = 0;
  const exchanged: string[] = [];
  const events: string[] = [];
  const win = Object.assign(target, { location: { href }, document: { referrer }, parent });
  const client = createFrameClient<string>({
    window: win,
    platformOrigin: PLATFORM,
    devOrigin: DEV,
    exchangeToken: async (token) => {
      exchanged.push(token);
      return `partner-session-${exchanged.length}`;
    },
    onSession: (s) => events.push(`session:${s}`),
    onUnauthenticated: () => events.push('guest'),
    onUnavailable: () => events.push('unavailable'),
    onChanged: () => events.push('changed'),
    timers,
    newRequestId: () => `q${++ids}`,
    random: () => 0.5, // no jitter
    ...overrides,
  });
  const fromPage = async (data: unknown, origin = PLATFORM, source: unknown = parent) => {
    target.dispatch('message', { data, origin, source });
    await flush();
  };
  const lastRequestId = () => {
    const requests = parent.posts.filter((p) => (p.message as { type: string }).type === 'platform:auth:request');
    return (requests.at(-1)?.message as { requestId: string } | undefined)?.requestId;
  };
  const token = (requestId: string | undefined, sub = 'alice') => ({
    type: 'platform:auth:token',
    requestId,
    token: fakeJwt(sub),
    expiresAt: '2030-01-01T00:00:00.000Z',
  });
  return { parent, target, timers, client, exchanged, events, fromPage, lastRequestId, token };
}

describe('detectPlatformHost', () => {
  it('uses host=platform first and the referrer as fallback', () => {
    expect(detectPlatformHost(FRAME_URL, '', PLATFORM)).toBe(PLATFORM);
    expect(detectPlatformHost('https://client.game.example/play', 'https://yumina.example/demo?path=%2F', PLATFORM)).toBe(PLATFORM);
    expect(detectPlatformHost('https://client.game.example/play', 'https://other.example/', PLATFORM)).toBeNull();
    expect(detectPlatformHost('https://client.game.example/play?host=other', '', PLATFORM)).toBeNull();
    expect(detectPlatformHost(FRAME_URL, 'http://localhost:3000/demo', PLATFORM, DEV)).toBe(DEV);
  });
});

describe('frame client (item 6b)', () => {
  it('does nothing outside the platform', () => {
    const t = setup({}, 'https://client.game.example/play');
    expect(t.client.hostOrigin).toBeNull();
    expect(t.parent.posts).toEqual([]);
    expect(t.target.listenerCount('message')).toBe(0);
  });

  it('requests on boot, exchanges the token at once, and renews about once a minute', async () => {
    const t = setup();
    expect(t.parent.posts).toEqual([{ message: { type: 'platform:auth:request', requestId: 'q1' }, targetOrigin: PLATFORM }]);
    await t.fromPage(t.token('q1'));
    expect(t.exchanged).toEqual([fakeJwt('alice')]);
    expect(t.events).toEqual(['session:partner-session-1']);
    t.timers.advance(59_999);
    expect(t.lastRequestId()).toBe('q1');
    t.timers.advance(1);
    expect(t.lastRequestId()).toBe('q2');
    expect(JSON.stringify(t.client)).not.toContain(fakeJwt('alice')); // nothing kept
  });

  it('drops replies whose requestId is stale or unknown', async () => {
    const t = setup();
    t.client.refresh(); // q2 supersedes q1
    await t.fromPage(t.token('q1'));
    await t.fromPage(t.token('nope'));
    await t.fromPage({ type: 'platform:auth:unauthenticated', requestId: 'q1' });
    expect(t.exchanged).toEqual([]);
    expect(t.events).toEqual([]);
    await t.fromPage(t.token('q2'));
    expect(t.exchanged).toHaveLength(1);
  });

  it('changed invalidates pending requests and asks again', async () => {
    const t = setup();
    await t.fromPage({ type: 'platform:auth:changed' });
    expect(t.events).toEqual(['changed']);
    expect(t.lastRequestId()).toBe('q2');
    await t.fromPage(t.token('q1', 'alice')); // answer to the request from before the change
    expect(t.exchanged).toEqual([]);
    await t.fromPage(t.token('q2', 'bob'));
    expect(t.exchanged).toEqual([fakeJwt('bob')]);
  });

  it('an exchange still running when the user changes does not produce a session', async () => {
    const gate = deferred<string>();
    const t = setup({ exchangeToken: () => gate.promise });
    await t.fromPage(t.token('q1'));
    await t.fromPage({ type: 'platform:auth:changed' });
    gate.resolve('late-session');
    await flush();
    expect(t.events).toEqual(['changed']);
  });

  it('error is not a logout: keeps state, retries with growing backoff, never falls back to a guest', async () => {
    const t = setup();
    await t.fromPage({ type: 'platform:auth:error', requestId: 'q1', code: 'temporarily_unavailable' });
    expect(t.events).toEqual(['unavailable']);
    t.timers.advance(1999);
    expect(t.lastRequestId()).toBe('q1');
    t.timers.advance(1);
    expect(t.lastRequestId()).toBe('q2'); // 2 s
    await t.fromPage({ type: 'platform:auth:error', requestId: 'q2', code: 'temporarily_unavailable' });
    t.timers.advance(3999);
    expect(t.lastRequestId()).toBe('q2');
    t.timers.advance(1);
    expect(t.lastRequestId()).toBe('q3'); // 4 s
    expect(t.events).not.toContain('guest');
    expect(t.exchanged).toEqual([]);
    await t.fromPage(t.token('q3'));
    expect(t.events.at(-1)).toBe('session:partner-session-1');
  });

  it('backoff is capped', async () => {
    const t = setup({ backoffMaxMs: 5000 });
    for (let i = 1; i <= 6; i++) {
      await t.fromPage({ type: 'platform:auth:error', requestId: `q${i}`, code: 'temporarily_unavailable' });
      t.timers.advance(5000);
      expect(t.lastRequestId()).toBe(`q${i + 1}`);
    }
  });

  it('an unanswered request times out into a retry; a failed exchange retries too', async () => {
    const t = setup({ replyTimeoutMs: 1000 });
    t.timers.advance(1000);
    expect(t.events).toEqual(['unavailable']);
    t.timers.advance(2000);
    expect(t.lastRequestId()).toBe('q2');

    const failing = setup({
      exchangeToken: async () => {
        throw new Error('partner API down');
      },
    });
    await failing.fromPage(failing.token('q1'));
    expect(failing.events).toEqual(['unavailable']);
    failing.timers.advance(2000);
    expect(failing.lastRequestId()).toBe('q2');
  });

  it('unauthenticated: play as a guest, no renewal loop', async () => {
    const t = setup();
    await t.fromPage({ type: 'platform:auth:unauthenticated', requestId: 'q1' });
    expect(t.events).toEqual(['guest']);
    t.timers.advance(600_000);
    expect(t.lastRequestId()).toBe('q1');
  });

  it('accepts only the parent window on the platform or dev origin; drops malformed messages', async () => {
    const t = setup();
    const stranger = new RecordingWindow();
    for (const origin of ['https://evil.example', 'null', 'https://yumina.example.evil.example', 'http://yumina.example']) {
      await t.fromPage(t.token('q1'), origin);
    }
    await t.fromPage(t.token('q1'), PLATFORM, stranger);
    await t.fromPage({ type: 'platform:auth:token', requestId: 'q1', token: 'not-a-jwt', expiresAt: 'x' });
    await t.fromPage({ type: 'platform:auth:changed' }, 'https://evil.example');
    expect(t.exchanged).toEqual([]);
    expect(t.events).toEqual([]);
    await t.fromPage(t.token('q1'), DEV); // the configured dev origin is accepted
    expect(t.exchanged).toHaveLength(1);
  });

  it('login, logout and ready are posted to the platform origin explicitly', () => {
    const t = setup();
    t.client.login();
    t.client.logout();
    t.client.gameReady();
    expect(t.parent.posts.slice(1)).toEqual([
      { message: { type: 'platform:auth:login' }, targetOrigin: PLATFORM },
      { message: { type: 'platform:auth:logout' }, targetOrigin: PLATFORM },
      { message: { type: 'platform:game:ready' }, targetOrigin: PLATFORM },
    ]);
    expect(t.parent.posts.every((p) => p.targetOrigin !== '*')).toBe(true);
  });

  it('dispose stops timers and listening', () => {
    const t = setup();
    t.client.dispose();
    expect(t.timers.pending()).toEqual([]);
    expect(t.target.listenerCount('message')).toBe(0);
  });
});
