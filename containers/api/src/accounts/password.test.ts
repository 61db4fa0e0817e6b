import { ConfigError, DEFAULT_PASSWORD_HASH_COST, loadConfig } from '@yumina/config';
import { describe, expect, it } from 'vitest';
import { dummyHash, hashPassword, verifyPassword } from './password.ts';

describe('password hashes (scrypt)', () => {
  it('are made at N = 2^14 unless told otherwise, and verify only the password they were made from', async () => {
    expect(DEFAULT_PASSWORD_HASH_COST).toBe(14);
    const hash = await hashPassword('correct horse battery');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{88}$/);
    expect(await verifyPassword('correct horse battery', hash)).toBe(true);
    expect(await verifyPassword('correct horse batterY', hash)).toBe(false);
    // Two hashes of one password differ (a salt each).
    expect(await hashPassword('correct horse battery')).not.toBe(hash);
  });

  it('keep verifying at the cost they were made with after the configured cost changes, down or up', async () => {
    const low = await hashPassword('pw at ten', 10);
    const high = await hashPassword('pw at sixteen', 16);
    expect(low).toMatch(/^scrypt\$1024\$/);
    // 2^16 needs 64 MiB: more than OpenSSL's default memory cap, which the hash's own N raises.
    expect(high).toMatch(/^scrypt\$65536\$/);
    expect(await verifyPassword('pw at ten', low)).toBe(true);
    expect(await verifyPassword('pw at sixteen', high)).toBe(true);
    expect(await verifyPassword('pw at ten', high)).toBe(false);
  });

  it('an unknown e-mail is checked against a fixed hash of the configured cost, made once per cost', async () => {
    expect(await dummyHash(10)).toMatch(/^scrypt\$1024\$/);
    expect(await dummyHash(10)).toBe(await dummyHash(10));
    expect(await dummyHash()).toMatch(/^scrypt\$16384\$/);
    expect(await verifyPassword('not-a-real-password', await dummyHash(10))).toBe(true);
  });
});

describe('PASSWORD_HASH_COST', () => {
  const load = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/tmp/unused', ...env });
  const refusal = (env: Record<string, string>) => {
    try {
      load(env);
    } catch (err) {
      return err;
    }
    return null;
  };

  it('is 14 by default; 14 to 17 are taken', () => {
    expect(load({}).auth.passwordHashCost).toBe(14);
    expect(load({ PASSWORD_HASH_COST: '17' }).auth.passwordHashCost).toBe(17);
  });

  it('below 14 only for test runs (NODE_ENV=test), never below 10 or above 17', () => {
    for (const NODE_ENV of ['production', 'development']) {
      const err = refusal({ NODE_ENV, PASSWORD_HASH_COST: '10' });
      expect(err).toBeInstanceOf(ConfigError);
      expect(String((err as Error).message)).toMatch(/PASSWORD_HASH_COST.*only test runs/);
    }
    expect(load({ NODE_ENV: 'test', PASSWORD_HASH_COST: '10' }).auth.passwordHashCost).toBe(10);
    for (const value of ['9', '18', 'fourteen']) expect(refusal({ NODE_ENV: 'test', PASSWORD_HASH_COST: value })).toBeInstanceOf(ConfigError);
  });
});
