import { describe, expect, it } from 'vitest';
import { partnerLandingUrl, partnerRedirect } from './partner-redirect.ts';

const rule = {
  platformBase: 'https://yumina.example/',
  partner: 'demo',
  clientOrigin: 'https://client.game.example',
  isPortalEmbed: (url: URL) => url.pathname.startsWith('/embed/'),
};

describe('partnerRedirect (item 6e)', () => {
  it('sends every site URL to the landing page with the encoded path and query', () => {
    expect(partnerRedirect(rule, 'https://game.example/play/level-2?mode=hard&x=a%20b')).toEqual({
      status: 301,
      location: 'https://yumina.example/demo?path=%2Fplay%2Flevel-2%3Fmode%3Dhard%26x%3Da%2520b',
    });
    expect(partnerRedirect(rule, 'https://game.example/')?.location).toBe('https://yumina.example/demo');
  });

  it('round-trips: the landing page reads back the original path and query', () => {
    const location = partnerRedirect(rule, 'https://game.example/shop?item=7')!.location;
    expect(new URL(location).searchParams.get('path')).toBe('/shop?item=7');
  });

  it('leaves the portal embed and the client origin alone', () => {
    expect(partnerRedirect(rule, 'https://game.example/embed/otherportal?x=1')).toBeNull();
    expect(partnerRedirect(rule, 'https://client.game.example/play?host=platform')).toBeNull();
  });

  it('drops a path the landing page would refuse instead of forwarding it', () => {
    expect(partnerLandingUrl('https://yumina.example', 'demo', '/' + 'a'.repeat(600))).toBe('https://yumina.example/demo');
    expect(partnerLandingUrl('https://yumina.example', 'demo', '//evil.example')).toBe('https://yumina.example/demo');
  });
});
