import { describe, expect, it } from 'vitest';
import { decideApiProxy } from './allowlist.ts';

const origin = 'http://127.0.0.1:4000';
const world = '3f0c9a52-7d1e-4b8a-9c3e-5a6b7c8d9e01';
const allowed = (method: string, url: string) => decideApiProxy(method, url, world, origin).ok;

describe('sandbox fetch allowlist', () => {
  it('proxies the current world and the documented read-only routes', () => {
    expect(allowed('GET', `/api/worlds/${world}`)).toBe(true);
    expect(allowed('GET', `/api/worlds/${world}/updates?limit=5`)).toBe(true);
    expect(allowed('HEAD', `/api/library/${world}`)).toBe(true);
    expect(allowed('get', '/api/version')).toBe(true);
    expect(allowed('GET', `${origin}/api/version`)).toBe(true);
    expect(allowed('PUT', `/api/worlds/${world}/storage/high-score`)).toBe(true);
    expect(allowed('DELETE', `/api/worlds/${world}/storage/high-score`)).toBe(true);
    expect(allowed('POST', `/api/worlds/${world}/sessions`)).toBe(true);
    expect(decideApiProxy('GET', `/api/worlds/${world}/updates?limit=5`, world, origin)).toEqual({ ok: true, path: `/api/worlds/${world}/updates?limit=5` });
  });

  it('refuses other worlds, writes, other routes, other origins and tricky paths', () => {
    const other = '00000000-0000-4000-8000-000000000000';
    for (const [method, url] of [
      ['GET', `/api/worlds/${other}`],
      ['GET', '/api/worlds'],
      ['PUT', `/api/worlds/${world}`],
      ['DELETE', `/api/worlds/${world}`],
      ['POST', `/api/worlds/${world}/publish`],
      ['POST', `/api/worlds/${world}/updates`],
      ['PUT', `/api/worlds/${other}/storage/high-score`],
      ['PUT', `/api/worlds/${world}/storage`],
      ['POST', `/api/worlds/${other}/sessions`],
      ['POST', '/api/sessions/s1/messages'],
      ['GET', '/api/auth/session'],
      ['GET', '/api/settings/ai'],
      ['DELETE', '/api/account'],
      ['GET', '/health'],
      ['GET', 'http://127.0.0.1:4001/api/version'],
      ['GET', 'https://evil.example/api/version'],
      ['GET', `/api/worlds/${world}/../../auth/session`],
      ['GET', `/api/worlds/${world}/%2e%2e/%2e%2e/auth/session`],
      ['GET', `/api/worlds/${world}%2F..%2Fauth`],
      ['GET', `/api/worlds/${world}//x`],
      ['GET', '\\api\\version'],
      ['GET', `//127.0.0.1:4000/api/version`],
      ['GET', `http://user:pw@127.0.0.1:4000/api/version`],
      ['GET', 'api/version'],
    ] as const) {
      expect(allowed(method, url), `${method} ${url}`).toBe(false);
    }
  });

  it('takes extra rules from the host', () => {
    const rules = [{ methods: ['POST'], pattern: '/api/worlds/:world/sessions/*/messages' }];
    expect(decideApiProxy('POST', `/api/worlds/${world}/sessions/s1/messages`, world, origin, rules).ok).toBe(true);
    expect(decideApiProxy('POST', `/api/worlds/${world}/sessions/s1/other`, world, origin, rules).ok).toBe(false);
  });
});
