import { describe, expect, it } from 'vitest';
import { PartnerConfigError } from './errors.ts';
import { demoPartner, parsePartner, parsePartners, publicPartnerConfig } from './partner-config.ts';

const base = {
  slug: 'demo',
  clientOrigin: 'https://client.game.example',
  issuer: 'https://yumina.example',
};

describe('partner configuration', () => {
  it('applies defaults: enabled, apiOrigin = issuer, audience = slug, jwksUrl under the issuer, 90 s', () => {
    expect(parsePartner(base)).toEqual({
      slug: 'demo',
      enabled: true,
      clientOrigin: 'https://client.game.example',
      apiOrigin: 'https://yumina.example',
      audience: 'demo',
      issuer: 'https://yumina.example',
      jwksUrl: 'https://yumina.example/api/auth/jwks',
      tokenTtlSeconds: 90,
      devOrigin: undefined,
    });
  });

  it('public view has exactly the seven fields of §2.4', () => {
    const view = publicPartnerConfig(parsePartner({ ...base, devOrigin: 'http://localhost:5173', enabled: false }));
    expect(Object.keys(view)).toEqual([
      'enabled',
      'clientOrigin',
      'apiOrigin',
      'audience',
      'issuer',
      'jwksUrl',
      'tokenTtlSeconds',
    ]);
    expect(view.enabled).toBe(false);
  });

  it('parses several partners from JSON and rejects duplicates', () => {
    const registry = parsePartners(JSON.stringify([base, { ...base, slug: 'other', clientOrigin: 'https://o.example' }]));
    expect([...registry.keys()]).toEqual(['demo', 'other']);
    expect(() => parsePartners([base, base])).toThrow(/duplicate slug demo/);
  });

  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    ['origin with a path', { ...base, clientOrigin: 'https://client.game.example/play' }, /clientOrigin/],
    ['plain http on a public host', { ...base, clientOrigin: 'http://client.game.example' }, /https/],
    ['the string null', { ...base, clientOrigin: 'null' }, /clientOrigin/],
    ['bad slug', { ...base, slug: 'Demo Game' }, /slug/],
    ['client origin equal to the platform', { ...base, clientOrigin: 'https://yumina.example' }, /differ/],
    ['a token lifetime other than 90 s', { ...base, tokenTtlSeconds: 3600 }, /tokenTtlSeconds: is not configurable/],
    ['a token lifetime inside the old 10–300 range', { ...base, tokenTtlSeconds: 300 }, /tokenTtlSeconds: is not configurable/],
    ['a token lifetime of 10 s', { ...base, tokenTtlSeconds: 10 }, /tokenTtlSeconds/],
    ['a token lifetime written as text', { ...base, tokenTtlSeconds: '90' }, /tokenTtlSeconds/],
  ];
  for (const [name, input, message] of bad) {
    it(`refuses ${name} with PartnerConfigError`, () => {
      const attempt = () => parsePartners(input);
      expect(attempt).toThrow(PartnerConfigError);
      expect(attempt).toThrow(message);
    });
  }

  it('identity tokens live 90 s for every partner: an older configuration naming 90 still parses', () => {
    expect(parsePartner({ ...base, tokenTtlSeconds: 90 }).tokenTtlSeconds).toBe(90);
    expect(publicPartnerConfig(parsePartner(base)).tokenTtlSeconds).toBe(90);
  });

  it('allows plain http on loopback (the embedded demo)', () => {
    const demo = demoPartner('http://localhost:3000', 'http://127.0.0.1:3001');
    expect(demo).toMatchObject({ slug: 'demo', clientOrigin: 'http://127.0.0.1:3001', jwksUrl: 'http://localhost:3000/api/auth/jwks' });
  });
});
