import { findUnsafeText, isUnsafeText } from '@yumina/world/text';
import type { FastifyInstance } from 'fastify';
import { HttpError } from './errors.ts';

/** JSON bodies may nest arrays and objects at most this deep. */
export const JSON_MAX_DEPTH = 64;

/**
 * The deepest nesting of arrays and objects in a JSON text, found by one scan of the characters
 * (strings skipped), so a hostile body is refused before JSON.parse builds anything. Stops
 * counting once `limit` is passed.
 */
export function jsonDepthExceeds(text: string, limit = JSON_MAX_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return false;
}

// One definition of unsafe text for JSON bodies and imported files alike (@yumina/world/text).
export { findUnsafeText, isUnsafeText };

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * `true` on a route that applies its own rule to every query value, so the request-wide check
     * (U+0000, lone surrogates: 400) must not pre-empt it. The partner landing page is one: an
     * invalid `path` falls back to `/` there (seed 000 §2.6), it is not an error.
     */
    ownQueryRules?: boolean;
  }
}

const describe = (path: (string | number)[]) => (path.length ? path.join('.') : '(body)');

/**
 * The input guards of every app. JSON bodies: the nesting depth (64) is checked before parsing,
 * and any text field holding U+0000 or a lone surrogate is refused with its path — a 400, never a
 * 500 from the database. Query strings and path parameters get the same text check (except the
 * query of a route whose config sets `ownQueryRules`). Body size stays bounded per route by
 * Fastify's `bodyLimit`.
 */
export function installInputGuards(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    // a wildcard (`*`) is a file path its route resolves and refuses itself (404 for anything odd)
    const { '*': _wildcard, ...params } = (request.params ?? {}) as Record<string, unknown>;
    const query = request.routeOptions.config.ownQueryRules === true ? undefined : request.query;
    for (const [part, value] of [['query', query], ['path', params]] as const) {
      const bad = findUnsafeText(value);
      if (bad) throw new HttpError(400, 'INVALID_TEXT', `Invalid ${part}: ${describe(bad)}: must not contain U+0000 or unpaired surrogate characters`);
    }
  });
  // Fastify's own parser (prototype-poisoning refused) does the parsing once the depth is known to be safe.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (jsonDepthExceeds(body as string)) {
      return done(new HttpError(400, 'JSON_TOO_DEEP', `The request body nests deeper than ${JSON_MAX_DEPTH} levels.`), undefined);
    }
    parseJson(request, body as string, (err: Error | null, parsed?: unknown) => {
      if (err) return done(err, undefined);
      const bad = findUnsafeText(parsed);
      if (bad) return done(new HttpError(400, 'INVALID_TEXT', `Invalid request body: ${describe(bad)}: must not contain U+0000 or unpaired surrogate characters`), undefined);
      done(null, parsed);
    });
  });
}
