import { describe, expect, it } from 'vitest';
import { ASSET_TOKEN_PATTERN } from '@yumina/sandbox';
import { SecretBox } from '../accounts/secret-box.ts';
import { ASSET_LINK_TTL_SECONDS, ASSET_LINK_WINDOW_SECONDS, AssetLinkSigner } from './asset-link.ts';

const box = new SecretBox(Buffer.alloc(32, 7));
const signer = new AssetLinkSigner(box.deriveKey('asset-links'));
const NOW = Date.UTC(2025, 0, 1, 12, 2, 10);

describe('asset link signatures', () => {
  it('are valid for their own world until they expire, on a 5-minute grid 10 to 15 minutes ahead', () => {
    const { token, expiresAt } = signer.sign('world-a', NOW);
    expect(token).toMatch(ASSET_TOKEN_PATTERN);
    const seconds = (expiresAt.getTime() - NOW) / 1000;
    expect(seconds).toBeGreaterThanOrEqual(ASSET_LINK_TTL_SECONDS);
    expect(seconds).toBeLessThan(ASSET_LINK_TTL_SECONDS + ASSET_LINK_WINDOW_SECONDS);
    expect((expiresAt.getTime() / 1000) % ASSET_LINK_WINDOW_SECONDS).toBe(0);
    // The same window gives the same token (same URLs, same cache entries).
    expect(signer.sign('world-a', NOW + 30_000).token).toBe(token);
    expect(signer.check('world-a', token, NOW)).toBe('valid');
    expect(signer.check('world-a', token, expiresAt.getTime() - 1000)).toBe('valid');
    expect(signer.check('world-a', token, expiresAt.getTime())).toBe('expired');
  });

  it('never open another world, and refuse tampered, foreign-key and malformed tokens', () => {
    const { token } = signer.sign('world-a', NOW);
    const [exp, mac] = token.split('.') as [string, string];
    expect(signer.check('world-b', token, NOW)).toBe('invalid');
    expect(signer.check('world-a', `${Number(exp) + 300}.${mac}`, NOW)).toBe('invalid');
    const flipped = `${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    expect(signer.check('world-a', `${exp}.${flipped}`, NOW)).toBe('invalid');
    // The last character of 43 base64url characters carries 2 spare bits: only the canonical form counts.
    const last = mac.at(-1)!;
    const sibling = 'AEIMQUYcgkosw048'.includes(last) ? String.fromCharCode(last.charCodeAt(0) + 1) : null;
    if (sibling) expect(signer.check('world-a', `${exp}.${mac.slice(0, -1)}${sibling}`, NOW)).toBe('invalid');
    const otherKey = new AssetLinkSigner(new SecretBox(Buffer.alloc(32, 8)).deriveKey('asset-links'));
    expect(otherKey.check('world-a', token, NOW)).toBe('invalid');
    // Derived keys differ by purpose.
    expect(box.deriveKey('asset-links').equals(box.deriveKey('other'))).toBe(false);
    for (const bad of [undefined, null, 5, ['x'], '', token.replace('.', ''), `${token}x`, `-1.${mac}`, `${exp}.${mac}=`]) {
      expect(signer.check('world-a', bad, NOW)).toBe('invalid');
    }
    // Far beyond what the server issues: refused even with a genuine MAC.
    const farSigner = signer.sign('world-a', NOW + 3600_000);
    expect(signer.check('world-a', farSigner.token, NOW)).toBe('invalid');
  });
});
