import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import {
  buildIdentityClaims,
  generateSigningKeyMaterial,
  issueIdentityToken,
  loadSigningKeys,
  parsePartner,
} from '@yumina/identity';
import { bench, describe } from 'vitest';

/**
 * Identity-token issuance per second against a bare jose RS256 sign loop of the same claims
 * (issue 6; goal ≥ 0.8×). The baseline uses the very jose build packages/identity resolves.
 */

const identityRequire = createRequire(new URL('../packages/identity/package.json', import.meta.url));
const jose: typeof import('jose') = await import(pathToFileURL(identityRequire.resolve('jose')).href);

const keys = await loadSigningKeys({ current: await generateSigningKeyMaterial() });
const partner = parsePartner({ slug: 'demo', clientOrigin: 'https://client.game.example', issuer: 'https://yumina.example' });
const account = {
  id: 'acc-1234567890',
  email: 'player@example.com',
  emailVerified: true,
  username: 'player',
  displayName: 'Player One',
  picture: 'https://cdn.example/avatar.png',
};
const identities = { google: '109876543210987654321', discord: '123456789012345678' };
const claims = buildIdentityClaims({
  account,
  sessionId: 'sess-abc',
  identities,
  issuer: partner.issuer,
  audience: partner.audience,
  ttlSeconds: partner.tokenTtlSeconds,
  now: Date.now(),
});

describe('identity token issuance (RS256, 2048-bit)', () => {
  bench('issueIdentityToken', async () => {
    await issueIdentityToken({ keys, account, sessionId: 'sess-abc', identities, partner });
  });

  bench('baseline: bare jose SignJWT of the same claims', async () => {
    await new jose.SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: keys.current.kid, typ: 'JWT' })
      .sign(keys.current.privateKey);
  });
});
