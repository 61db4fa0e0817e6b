import { buildJwks, JWKS_MAX_AGE_SECONDS, jwksEtag, type SigningKeySet } from '@yumina/identity';
import type { FastifyPluginAsync } from 'fastify';

/**
 * GET /api/auth/jwks: the public signing keys as a standard JWK Set. Cached for 5 minutes with
 * an ETag; the rotation procedure (docs/PARTNERS.md) publishes a next key at least that long
 * before it signs and keeps the previous key for token lifetime plus that long after, so caching
 * never hides a key a valid token needs.
 */

export interface JwksPluginOptions {
  /** The key set, or a getter (re-read on every request, so a reload after rotation is seen). */
  keys: SigningKeySet | (() => SigningKeySet | Promise<SigningKeySet>);
}

export const JWKS_CACHE_CONTROL = `public, max-age=${JWKS_MAX_AGE_SECONDS}, stale-if-error=86400`;

export const jwksPlugin: FastifyPluginAsync<JwksPluginOptions> = async (app, options) => {
  app.get('/api/auth/jwks', async (request, reply) => {
    let keys: SigningKeySet;
    try {
      keys = typeof options.keys === 'function' ? await options.keys() : options.keys;
    } catch {
      return reply
        .code(503)
        .header('cache-control', 'no-store')
        .header('retry-after', '5')
        .send({ error: { code: 'JWKS_UNAVAILABLE', message: 'The key set is temporarily unavailable.' } });
    }
    const jwks = buildJwks(keys);
    const etag = jwksEtag(jwks);
    reply.header('cache-control', JWKS_CACHE_CONTROL).header('etag', etag);
    const match = request.headers['if-none-match'];
    if (typeof match === 'string' && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
      return reply.code(304).send();
    }
    return reply.type('application/json').send(jwks);
  });
};

export default jwksPlugin;
