import { describe, expect, it, vi } from 'vitest';
import { type BridgeControllerOptions, createBridgeController, type SessionSnapshot, type TokenResponseLike } from './bridge-controller.ts';
import {
  type Deferred,
  deferred,
  FakeEventTarget,
  fakeJwt,
  flush,
  ManualTimers,
  RecordingWindow,
} from './bridge-test-doubles.ts';

const CLIENT = 'https://client.game.example';
const alice: SessionSnapshot = { signedIn: true, accountId: 'alice', sessionId: 's-a' };
const bob: SessionSnapshot = { signedIn: true, accountId: 'bob', sessionId: 's-b' };
const nobody: SessionSnapshot = { signedIn: false };

function tokenResponse(sub: string, status = 200): TokenResponseLike {
  return { status, json: async () => ({ token: fakeJwt(sub), expiresAt: '2030-01-01T00:01:30.000Z' }) };
}
const statusOnly = (status: number): TokenResponseLike => ({ status, json: async () => ({ error: { code: 'X', message: 'x' } }) });

/** A page with a controllable session loader and token endpoint. */
function setup(overrides: Partial<BridgeControllerOptions> = {}) {
  const win = new FakeEventTarget();
  const doc = Object.assign(new FakeEventTarget(), { visibilityState: 'visible' });
  const frame = new RecordingWindow();
  const timers = new ManualTimers();
  const sessionLoads: Array<Deferred<SessionSnapshot>> = [];
  const fetches: Array<Deferred<TokenResponseLike>> = [];
  const calls = { login: 0, logout: 0, ready: 0 };
  const fetchSpy = vi.fn((_url: string, _init: unknown) => {
    const d = deferred<TokenResponseLike>();
    fetches.push(d);
    return d.promise;
  });
  const controller = createBridgeController({
    window: win,
    document: doc,
    frame: () => frame,
    clientOrigin: CLIENT,
    tokenUrl: '/api/partners/demo/token',
    fetch: fetchSpy,
    loadSession: () => {
      const d = deferred<SessionSnapshot>();
      sessionLoads.push(d);
      return d.promise;
    },
    login: () => {
      calls.login++;
    },
    logout: async () => {
      calls.logout++;
    },
    onGameReady: () => {
      calls.ready++;
    },
    timers,
    ...overrides,
  });
  const fromFrame = (data: unknown, origin = CLIENT, source: unknown = frame) => win.dispatch('message', { data, origin, source });
  const request = (requestId: string) => fromFrame({ type: 'platform:auth:request', requestId });
  const resolveSession = async (snapshot: SessionSnapshot) => {
    sessionLoads.at(-1)!.resolve(snapshot);
    await flush();
  };
  const resolveFetch = async (response: TokenResponseLike, index = fetches.length - 1) => {
    fetches[index]!.resolve(response);
    await flush();
  };
  return { win, doc, frame, timers, sessionLoads, fetches, fetchSpy, calls, controller, fromFrame, request, resolveSession, resolveFetch };
}

describe('bridge controller: answering auth requests', () => {
  it('waits while the session loads (never unauthenticated early), then answers with a token echoing requestId', async () => {
    const t = setup();
    t.request('r1');
    await flush();
    expect(t.frame.posts).toEqual([]); // still loading: no answer, and no token fetch yet
    expect(t.fetchSpy).not.toHaveBeenCalled();
    await t.resolveSession(alice);
    expect(t.fetchSpy).toHaveBeenCalledWith('/api/partners/demo/token', expect.objectContaining({ method: 'POST', credentials: 'same-origin' }));
    await t.resolveFetch(tokenResponse('alice'));
    expect(t.frame.posts).toEqual([
      {
        message: { type: 'platform:auth:token', requestId: 'r1', token: fakeJwt('alice'), expiresAt: '2030-01-01T00:01:30.000Z' },
        targetOrigin: CLIENT,
      },
    ]);
  });

  it('answers unauthenticated once the session resolves signed out', async () => {
    const t = setup();
    t.request('r1');
    await flush();
    expect(t.frame.posts).toEqual([]);
    await t.resolveSession(nobody);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:unauthenticated', requestId: 'r1' }]);
  });

  it('answers only the newest pending request', async () => {
    const t = setup();
    await t.resolveSession(alice);
    t.request('r1');
    t.request('r2');
    await flush();
    t.request('r3');
    await flush();
    expect(t.fetchSpy).toHaveBeenCalledTimes(1); // one fetch serves the newest request
    await t.resolveFetch(tokenResponse('alice'));
    expect(t.frame.take()).toEqual([expect.objectContaining({ type: 'platform:auth:token', requestId: 'r3' })]);
  });

  it('maps 401 to unauthenticated and every other failure to error temporarily_unavailable', async () => {
    const cases: Array<[TokenResponseLike | Error, unknown]> = [
      [statusOnly(401), { type: 'platform:auth:unauthenticated', requestId: 'r' }],
      [statusOnly(403), { type: 'platform:auth:error', requestId: 'r', code: 'temporarily_unavailable' }],
      [statusOnly(429), { type: 'platform:auth:error', requestId: 'r', code: 'temporarily_unavailable' }],
      [statusOnly(503), { type: 'platform:auth:error', requestId: 'r', code: 'temporarily_unavailable' }],
      [statusOnly(500), { type: 'platform:auth:error', requestId: 'r', code: 'temporarily_unavailable' }],
      [{ status: 200, json: async () => ({ nope: true }) }, { type: 'platform:auth:error', requestId: 'r', code: 'temporarily_unavailable' }],
      [new TypeError('network down'), { type: 'platform:auth:error', requestId: 'r', code: 'temporarily_unavailable' }],
    ];
    for (const [outcome, expected] of cases) {
      const t = setup();
      await t.resolveSession(alice);
      t.request('r');
      await flush();
      if (outcome instanceof Error) t.fetches[0]!.reject(outcome);
      else t.fetches[0]!.resolve(outcome);
      await flush();
      expect(t.frame.take()[0]).toEqual(expected);
    }
  });

  it('a 401 while the page thought someone was signed in leads to changed after revalidation', async () => {
    const t = setup();
    await t.resolveSession(alice);
    t.request('r1');
    await flush();
    await t.resolveFetch(statusOnly(401));
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:unauthenticated', requestId: 'r1' }]);
    await t.resolveSession(nobody); // the revalidation the 401 started
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
  });

  it('says temporarily_unavailable (not unauthenticated) when the session cannot be loaded, and retries loading', async () => {
    const t = setup();
    t.request('r1');
    t.sessionLoads[0]!.reject(new Error('offline'));
    await flush();
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:error', requestId: 'r1', code: 'temporarily_unavailable' }]);
    expect(t.sessionLoads).toHaveLength(2);
    t.request('r2');
    await t.resolveSession(nobody);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:unauthenticated', requestId: 'r2' }]);
  });
});

describe('bridge controller: changes', () => {
  it('announces a user switch found on focus regain and drops the fetch begun before it', async () => {
    const t = setup();
    await t.resolveSession(alice);
    t.request('r1');
    await flush();
    expect(t.fetches).toHaveLength(1);
    t.win.dispatch('focus');
    await t.resolveSession(bob);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
    t.request('r2'); // the frame asks again while the stale fetch is still running
    await flush();
    expect(t.fetches).toHaveLength(2); // a fresh fetch, not the one begun before the change
    await t.resolveFetch(tokenResponse('alice'), 0); // the stale fetch completes: dropped
    expect(t.frame.posts).toEqual([]);
    await t.resolveFetch(tokenResponse('bob'), 1);
    expect(t.frame.take()).toEqual([expect.objectContaining({ type: 'platform:auth:token', requestId: 'r2', token: fakeJwt('bob') })]);
  });

  it('announces login and logout found by revalidation, but not the first load or an unchanged session', async () => {
    const t = setup();
    await t.resolveSession(nobody);
    expect(t.frame.posts).toEqual([]);
    t.doc.dispatch('visibilitychange');
    await t.resolveSession(nobody);
    expect(t.frame.posts).toEqual([]);
    void t.controller.sessionChanged();
    await t.resolveSession(alice);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
    t.win.dispatch('focus');
    await t.resolveSession(nobody);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
  });

  it('a new login session of the same user is a change too (sid differs)', async () => {
    const t = setup();
    await t.resolveSession(alice);
    t.win.dispatch('focus');
    await t.resolveSession({ signedIn: true, accountId: 'alice', sessionId: 's-a2' });
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
  });

  it('revalidates on an interval while visible, so another tab’s login is announced within a few seconds', async () => {
    const t = setup({ revalidateIntervalMs: 3000 });
    await t.resolveSession(nobody);
    t.timers.advance(2999);
    expect(t.sessionLoads).toHaveLength(1);
    t.timers.advance(1);
    expect(t.sessionLoads).toHaveLength(2);
    await t.resolveSession(alice);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
    (t.doc as { visibilityState: string }).visibilityState = 'hidden';
    t.timers.advance(9000);
    expect(t.sessionLoads).toHaveLength(2); // no polling while hidden
  });

  it('a token for another user than the known one is not handed out; the change is announced instead', async () => {
    const t = setup();
    await t.resolveSession(alice);
    t.request('r1');
    await flush();
    await t.resolveFetch(tokenResponse('bob'));
    expect(t.frame.posts).toEqual([]);
    await t.resolveSession(bob);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
  });

  it('logout requested by the frame: ends the session, sends changed, then requests are unauthenticated', async () => {
    const t = setup();
    await t.resolveSession(alice);
    t.request('r1');
    await flush();
    t.fromFrame({ type: 'platform:auth:logout' });
    await flush();
    expect(t.calls.logout).toBe(1);
    await t.resolveFetch(tokenResponse('alice'), 0); // in flight from before the logout: dropped
    t.request('r2'); // arrives while the logout is settling: waits
    await flush();
    expect(t.frame.posts).toEqual([]);
    await t.resolveSession(nobody);
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:changed' }]);
    t.request('r3');
    await flush();
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:unauthenticated', requestId: 'r3' }]);
  });

  it('login and game-ready messages reach their hooks', async () => {
    const t = setup();
    t.fromFrame({ type: 'platform:auth:login' });
    t.fromFrame({ type: 'platform:game:ready' });
    expect(t.calls).toMatchObject({ login: 1, ready: 1 });
  });
});

describe('bridge controller: message acceptance', () => {
  it('accepts only the frame window with the exact client origin; drops malformed messages', async () => {
    const t = setup();
    await t.resolveSession(nobody);
    const other = new RecordingWindow();
    const origins = ['null', 'https://client.game.example.evil.example', 'https://client.game.example:8443', 'http://client.game.example', 'https://evil.example', 'https://CLIENT.game.example '];
    for (const origin of origins) t.fromFrame({ type: 'platform:auth:request', requestId: 'x' }, origin);
    t.fromFrame({ type: 'platform:auth:request', requestId: 'y' }, CLIENT, other); // right origin, wrong window
    t.fromFrame({ type: 'platform:auth:login' }, 'https://evil.example');
    for (const data of [null, 'platform:auth:request', { type: 'platform:auth:request' }, { type: 'platform:auth:request', requestId: 'a b' }, { type: 'x' }]) {
      t.fromFrame(data);
    }
    await flush();
    expect(t.frame.posts).toEqual([]);
    expect(other.posts).toEqual([]);
    expect(t.calls.login).toBe(0);
    t.request('ok');
    await flush();
    expect(t.frame.take()).toEqual([{ type: 'platform:auth:unauthenticated', requestId: 'ok' }]);
  });

  it('every post names the client origin, never *', async () => {
    const t = setup();
    await t.resolveSession(alice);
    t.request('r1');
    await flush();
    await t.resolveFetch(tokenResponse('alice'));
    t.win.dispatch('focus');
    await t.resolveSession(nobody);
    expect(t.frame.posts.length).toBeGreaterThanOrEqual(2);
    expect(new Set(t.frame.posts.map((p) => p.targetOrigin))).toEqual(new Set([CLIENT]));
  });

  it('refuses a wildcard, null or path-carrying client origin', () => {
    for (const clientOrigin of ['*', 'null', 'https://client.game.example/', 'client.game.example']) {
      expect(() => setup({ clientOrigin })).toThrow(/exact origin/);
    }
  });

  it('dispose detaches listeners and stops polling', async () => {
    const t = setup();
    await t.resolveSession(nobody);
    t.controller.dispose();
    expect(t.win.listenerCount('message')).toBe(0);
    expect(t.win.listenerCount('focus')).toBe(0);
    expect(t.doc.listenerCount('visibilitychange')).toBe(0);
    expect(t.timers.pending()).toEqual([]);
  });
});
