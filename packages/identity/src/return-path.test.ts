import { describe, expect, it } from 'vitest';
import { safeReturnTo } from './return-path.ts';

const ORIGIN = 'https://play.example';

describe('safeReturnTo', () => {
  it('keeps same-origin paths with their query and hash', () => {
    expect(safeReturnTo('/app/settings', ORIGIN)).toBe('/app/settings');
    expect(safeReturnTo('/play/wld_1?x=1#chat', ORIGIN)).toBe('/play/wld_1?x=1#chat');
    expect(safeReturnTo('/app/settings#providers', ORIGIN)).toBe('/app/settings#providers');
    expect(safeReturnTo('/search?q=a%20b', ORIGIN)).toBe('/search?q=a%20b');
  });

  it.each([
    ['//evil.example'],
    ['https://evil.example'],
    ['http://play.example.evil.example/'],
    ['/\\evil.example/'],
    ['/%5Cevil.example/'],
    ['/%5cevil.example/'],
    ['/\t/evil.example/'],
    ['/%09/evil.example/'],
    ['/\r\n/evil.example'],
    ['/%0d%0a/evil.example'],
    ['/%2F%2Fevil.example'],
    ['/%2F/evil.example'],
    ['/%252F%252Fevil.example'],
    ['/%255Cevil.example'],
    ['javascript:alert(1)'],
    ['evil.example'],
    [''],
    ['/%zz'],
    [`/${'a'.repeat(600)}`],
  ])('refuses %j', (raw) => {
    expect(safeReturnTo(raw, ORIGIN)).toBe('/');
    expect(safeReturnTo(raw, ORIGIN, '/app/settings')).toBe('/app/settings');
  });

  it('refuses values that are not strings', () => {
    for (const v of [undefined, null, 1, ['/'], { a: 1 }]) expect(safeReturnTo(v, ORIGIN)).toBe('/');
  });
});
