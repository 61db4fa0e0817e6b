import { describe, expect, it } from 'vitest';
import { COMPAT_ROUTES, type CompatFetchPlan, type CompatFetchScope, compatAnswer, pickAnswer, planCompatFetch } from './compat-fetch.ts';

const origin = 'http://127.0.0.1:4000';
const world = 'wld_3f0c9a527d1e4b8a9c3e5a';
const session = 'cnv_AAAAAAAAAAAAAAAAAAAAAA';
const scope = { origin, worldId: world, sessionId: session };
const plan = (url: string, method = 'GET', s: CompatFetchScope = scope): CompatFetchPlan => planCompatFetch(method, url, s);
const pathOf = (url: string, method = 'GET') => {
  const p = plan(url, method);
  return p.ok ? p.path : `refused: ${p.reason}`;
};

describe('the compatibility fetch: what is forwarded', () => {
  it('forwards the reads of the open world, the open session and the player’s models, path rebuilt', () => {
    for (const url of [
      '/api/version',
      `/api/worlds/${world}`,
      `/api/library/${world}`,
      `/api/worlds/${world}/updates`,
      `/api/worlds/${world}/sessions`,
      `/api/worlds/${world}/storage`,
      `/api/worlds/${world}/player`,
      `/api/sessions/${session}`,
      `/api/sessions/${session}/messages/msg_Bbbbbbbbbbbbbbbbbbbbbb`,
      `/api/sessions/${session}/checkpoints`,
      '/api/models',
    ])
      expect(pathOf(url), url).toBe(url);
    expect(pathOf(`${origin}/api/sessions/${session}/checkpoints`)).toBe(`/api/sessions/${session}/checkpoints`);
    expect(pathOf('/api/version', 'get')).toBe('/api/version');
    // A fragment never reaches a server; the query keeps the route's own parameters, checked and re-encoded.
    expect(pathOf(`/api/worlds/${world}/sessions?limit=5&cursor=WyIxIiwiY252X3giXQ#top`)).toBe(`/api/worlds/${world}/sessions?limit=5&cursor=WyIxIiwiY252X3giXQ`);
    expect(pathOf(`/api/sessions/${session}?before=40&limit=20`)).toBe(`/api/sessions/${session}?before=40&limit=20`);
    expect(COMPAT_ROUTES).toHaveLength(11);
  });
});

describe('the compatibility fetch: what is refused', () => {
  const refused = (url: string, method = 'GET', s: CompatFetchScope = scope) => {
    const p = plan(url, method, s);
    return p.ok ? `forwarded as ${p.path}` : p.reason;
  };

  it('refuses every method but GET, whatever the route', () => {
    for (const method of ['HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])
      expect(refused(`/api/worlds/${world}/storage`, method), method).toMatch(new RegExp(`^${method} is not forwarded: a world's interface only reads`));
    expect(refused(`/api/worlds/${world}/sessions`, 'POST')).toMatch(/createSession/);
  });

  it('refuses other worlds, other sessions and ids not of the platform’s form', () => {
    const other = 'wld_00000000000000000000ff';
    expect(refused(`/api/worlds/${other}`)).toMatch(/only this world's routes are forwarded .*is another world/);
    expect(refused(`/api/library/${other}`)).toMatch(/is another world/);
    expect(refused(`/api/worlds/${other}/sessions`)).toMatch(/is another world/);
    expect(refused('/api/sessions/cnv_BBBBBBBBBBBBBBBBBBBBBB/checkpoints')).toMatch(/only the open session's routes .*is another session/);
    expect(refused(`/api/sessions/${session}`, 'GET', { ...scope, sessionId: null })).toMatch(/no session is open/);
    expect(refused(`/api/sessions/preview`, 'GET', { ...scope, sessionId: 'preview' })).toMatch(/not a session id of this platform/);
    expect(refused(`/api/sessions/${world}`)).toMatch(/not a session id of this platform \(cnv_/);
    expect(refused(`/api/sessions/${session}/messages/chk_x`)).toMatch(/not a message id/);
    expect(refused('/api/worlds/import')).toMatch(/not a world id/);
  });

  it('refuses the account, settings, partner, auth and every other route', () => {
    for (const url of [
      '/api/account',
      '/api/auth/session',
      '/api/settings/ai',
      '/api/partners/demo/config',
      '/api/personas',
      '/api/billing',
      '/api/me/sessions',
      '/api/worlds',
      `/api/worlds/${world}/assets`,
      `/api/worlds/${world}/review`,
      `/api/worlds/${world}/updates/events`,
      `/api/worlds/${world}/storage/key`,
      `/api/sessions/${session}/ai/complete`,
      '/health',
    ])
      expect(refused(url), url).toMatch(/is not forwarded|only \/api\/ paths/);
  });

  it('refuses traversal, encoded traversal, other origins and malformed URLs', () => {
    for (const [url, reason] of [
      [`/api/worlds/${world}/../../account`, /not in normal form/],
      [`/api/sessions/${session}/./checkpoints`, /not in normal form/],
      [`/api/worlds/${world}/%2e%2e/%2e%2e/account`, /percent-encoded/],
      [`/api/worlds/${world}%2F..%2Faccount`, /percent-encoded/],
      [`/api/sessions/${session}/messages/msg_x%3F`, /percent-encoded/],
      [`/api/worlds/${world}/storage%23`, /percent-encoded/],
      ['/api/worlds/wld_x\\..\\..\\account', /backslashes/],
      [`/api/worlds/${world}//sessions`, /empty segment/],
      [`/api/worlds/${world}/sessions/`, /empty segment/],
      [`/api/worlds/${world}/sto.rage`, /character no route takes/],
      [`/api/sessions/${session}?x=1`, /query parameter "x" is not forwarded .*takes before, limit/],
      [`/api/sessions/${session}?limit=1&limit=2`, /given twice/],
      [`/api/sessions/${session}?limit=500`, /limit must be an integer from 1 to 200/],
      [`/api/worlds/${world}/sessions?cursor=../../account`, /cursor must be a page cursor/],
      [`/api/worlds/${world}?constructor=1`, /"constructor" is not forwarded .*takes none/],
      ['http://127.0.0.1:4001/api/version', /only paths of this site/],
      ['https://evil.example/api/version', /only paths of this site/],
      ['//127.0.0.1:4000/api/version', /only paths of this site/],
      ['http://user:pw@127.0.0.1:4000/api/version', /only paths of this site/],
      ['api/version', /only paths of this site/],
      ['/api/version\u0000', /control characters/],
      ['/api/ver sion', /spaces/],
    ] as const)
      expect(refused(url), url).toMatch(reason);
  });
});

describe('the compatibility fetch: what is answered', () => {
  const route = (path: string) => {
    const p = plan(path);
    if (!p.ok) throw new Error(p.reason);
    return p.route;
  };

  it('keeps only the documented fields, at every depth', () => {
    const server = {
      sessions: [{ id: 'cnv_a', worldId: world, title: 't', createdAt: 'c', updatedAt: 'u', messageCount: 2, memory: 'the player’s notes', state: { variables: { hp: 1 } } }],
      nextCursor: null,
      secret: 'x',
    };
    expect(compatAnswer(route(`/api/worlds/${world}/sessions`), 200, server)).toEqual({
      status: 200,
      body: { sessions: [{ id: 'cnv_a', worldId: world, title: 't', createdAt: 'c', updatedAt: 'u', messageCount: 2 }], nextCursor: null },
    });
    const page = {
      session: { id: session, worldId: world, title: 't', messageCount: 1, branchedFrom: null, memory: 'm', state: { variables: { hp: 3 }, pendingChoices: ['a'], pendingContext: [{ role: 'system', content: 'hidden' }] }, createdAt: 'c', updatedAt: 'u' },
      messages: [{ id: 'msg_a', position: 0, role: 'assistant', content: 'hi', stateSnapshot: { variables: { hp: 3 }, pendingContext: [] }, swipes: [{ content: 'hi', snapshot: { variables: {}, turnCount: 1 } }], truncated: false, createdAt: 'c' }],
      history: { earlierCursor: null, limit: 50 },
    };
    expect(compatAnswer(route(`/api/sessions/${session}`), 200, page).body).toEqual({
      session: { id: session, worldId: world, title: 't', messageCount: 1, branchedFrom: null, state: { variables: { hp: 3 }, pendingChoices: ['a'] }, createdAt: 'c', updatedAt: 'u' },
      messages: [{ id: 'msg_a', position: 0, role: 'assistant', content: 'hi', stateSnapshot: { variables: { hp: 3 } }, swipes: [{ content: 'hi', snapshot: { variables: {} } }], createdAt: 'c' }],
      history: { earlierCursor: null, limit: 50 },
    });
    expect(compatAnswer(route('/api/version'), 200, { version: '1.2.3', mode: 'local' }).body).toEqual({ version: '1.2.3' });
    expect(compatAnswer(route('/api/models'), 200, { models: [{ id: 'm', name: 'M', provider: 'private', contextLength: null, price: 1 }], pinned: [], recent: ['m'], errors: ['private: boom'] }).body).toEqual({
      models: [{ id: 'm', name: 'M', provider: 'private', contextLength: null }],
      pinned: [],
      recent: ['m'],
    });
  });

  it('answers a failure with its code and message only, and a body that is not JSON with 502', () => {
    expect(compatAnswer(route(`/api/sessions/${session}`), 404, { error: { code: 'NOT_FOUND', message: 'No such session.', stack: 'x' }, debug: 1 })).toEqual({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: 'No such session.' } },
    });
    expect(compatAnswer(route('/api/version'), 200, undefined)).toMatchObject({ status: 502, body: { error: { code: 'UNREADABLE_ANSWER' } } });
    expect(compatAnswer(route('/api/version'), 503, undefined)).toMatchObject({ status: 503, body: { error: { code: 'UNREADABLE_ANSWER' } } });
  });

  it('turns a value of another type into null and leaves absent keys absent', () => {
    expect(pickAnswer({ a: 1, b: 'x', c: { d: [1, 'two'] } }, { a: 'string', b: 'string', c: { d: ['number'] }, e: 'string' })).toEqual({ a: null, b: 'x', c: { d: [1, null] } });
    expect(pickAnswer('text', { a: 'string' })).toBeNull();
  });
});
