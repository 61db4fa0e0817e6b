import { describe, expect, it } from 'vitest';
import { renewDelayMs } from './asset-access.ts';

describe('asset access renewal', () => {
  it('renews when less than 5 minutes are left (by the server’s count), never in a tight loop, and not for public worlds', () => {
    expect(renewDelayMs({ token: 't', expiresInSeconds: 900 })).toBe(600_000);
    expect(renewDelayMs({ token: 't', expiresInSeconds: 600 })).toBe(300_000);
    expect(renewDelayMs({ token: 't', expiresInSeconds: 100 })).toBe(15_000);
    expect(renewDelayMs({ token: null, expiresInSeconds: null })).toBeNull();
  });
});
