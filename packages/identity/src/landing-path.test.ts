import { describe, expect, it } from 'vitest';
import { LANDING_PATH_MAX_LENGTH, landingFrameUrl, safeLandingPath } from './landing-path.ts';

describe('safeLandingPath (§2.6)', () => {
  const refused: Array<[string, unknown]> = [
    ['protocol-relative', '//evil.example'],
    ['protocol-relative with path', '//evil.example/play?x=1'],
    ['backslash after slash', '/\\evil'],
    ['encoded backslash', '/%5cevil'],
    ['encoded backslash upper case', '/%5Cevil'],
    ['encoded double slash', '/%2f%2fevil'],
    ['encoded double slash upper case', '/%2F%2Fevil'],
    ['double-encoded double slash', '/%252f%252fevil'],
    ['encoded tab', '/%09/evil'],
    ['http: without slashes', 'http:evil.example'],
    ['control character NUL', '/play\u0000'],
    ['control character BEL', '/pl\u0007ay'],
    ['DEL', '/play\u007f'],
    ['C1 control', '/play\u0085'],
    ['raw tab', '/\t/evil'],
    ['CR/LF', '/play\r\nSet-Cookie: a=b'],
    ['LF only', '/play\nx'],
    ['encoded CR/LF', '/play%0d%0aSet-Cookie:%20a=b'],
    ['513 characters', '/' + 'a'.repeat(LANDING_PATH_MAX_LENGTH)],
    ['javascript: URL', 'javascript:alert(1)'],
    ['absolute https URL', 'https://evil.example'],
    ['empty value', ''],
    ['missing value', undefined],
    ['null', null],
    ['array from repeated parameter', ['/a', '/b']],
    ['number', 42],
    ['relative path', 'play'],
    ['encoded backslash next to a stray percent sign', '/%5cevil%'],
    ['encoded double slash next to an invalid escape', '/%2f%2fevil%zz'],
    ['dot segments up to a double slash', '/..//evil.example'],
    ['line separator', '/play\u2028'],
  ];
  for (const [name, value] of refused) {
    it(`falls back to / for ${name}`, () => {
      expect(safeLandingPath(value)).toBe('/');
    });
  }

  const kept = [
    '/',
    '/play',
    '/play?level=3',
    '/play?level=3&mode=hard',
    '/worlds/abc-123/chapter/2?from=portal&q=a%20b',
    '/search?next=%2Fplay', // an encoded slash inside the query is fine
    '/a/b/c#section',
    '/search?q=100%25', // an encoded percent sign: decoded once it is a plain %, not an escape
    '/search?q=100%25%25', // the same, twice
    '/play%zz', // a % that starts no escape is plain text; §2.6 does not refuse it
  ];
  for (const value of kept) {
    it(`keeps the valid path ${value}`, () => {
      expect(safeLandingPath(value)).toBe(value);
    });
  }

  it('keeps a path of exactly 512 characters', () => {
    const value = '/' + 'a'.repeat(LANDING_PATH_MAX_LENGTH - 1);
    expect(value).toHaveLength(512);
    expect(safeLandingPath(value)).toBe(value);
  });
});

describe('landingFrameUrl', () => {
  const client = 'https://client.game.example';

  it('frames {clientOrigin}{path} with host=platform, keeping the query as given', () => {
    expect(landingFrameUrl(client, '/play?level=3&q=a%20b')).toBe(`${client}/play?level=3&q=a%20b&host=platform`);
    expect(landingFrameUrl(client, undefined)).toBe(`${client}/?host=platform`);
    expect(landingFrameUrl(client, '/search?q=100%25')).toBe(`${client}/search?q=100%25&host=platform`);
  });

  it('replaces a host parameter smuggled in the path', () => {
    expect(landingFrameUrl(client, '/play?host=evil&x=1')).toBe(`${client}/play?x=1&host=platform`);
  });

  it('stays on the client origin for every refused input', () => {
    for (const value of ['//evil.example', 'https://evil.example', '/\\evil', 'javascript:alert(1)']) {
      expect(landingFrameUrl(client, value)).toBe(`${client}/?host=platform`);
    }
  });

  it('cannot carry markup or script into the page', () => {
    const attempts = [
      '/"><script>alert(1)</script>',
      "/play?x='onload='alert(1)",
      '/play?<img src=x onerror=alert(1)>',
      '/play#"><svg onload=alert(1)>',
      "/play#'onmouseover='alert(1)",
    ];
    for (const attempt of attempts) {
      const url = landingFrameUrl(client, attempt);
      expect(url.startsWith(`${client}/`)).toBe(true);
      expect(url).not.toMatch(/[<>"'\s]/);
    }
  });
});
