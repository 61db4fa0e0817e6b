import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { installErrorHandling } from './app.ts';
import { findUnsafeText, installInputGuards, isUnsafeText, jsonDepthExceeds } from './input-guards.ts';

describe('input guards', () => {
  it('counts nesting by structure only: brackets inside strings (and escaped quotes) do not count', () => {
    expect(jsonDepthExceeds('['.repeat(64) + ']'.repeat(64))).toBe(false);
    expect(jsonDepthExceeds('['.repeat(65) + ']'.repeat(65))).toBe(true);
    expect(jsonDepthExceeds(`{"a":"${'['.repeat(1000)}"}`)).toBe(false);
    expect(jsonDepthExceeds(`{"a":"\\"${'{'.repeat(100)}"}`)).toBe(false);
    expect(jsonDepthExceeds(`[${'{"a":'.repeat(70)}1${'}'.repeat(70)}]`)).toBe(true);
    // an unterminated deep prefix is refused before any parse
    expect(jsonDepthExceeds('['.repeat(10_000))).toBe(true);
  });

  it('finds U+0000 and unpaired surrogates by path, and lets paired surrogates (emoji) through', () => {
    expect(isUnsafeText('fine 😀')).toBe(false);
    expect(isUnsafeText('a\u0000b')).toBe(true);
    expect(isUnsafeText('\ud83d')).toBe(true);
    expect(isUnsafeText('\ude00x')).toBe(true);
    expect(findUnsafeText({ world: { entries: [{ content: 'ok' }, { content: 'bad\u0000' }] } })).toEqual(['world', 'entries', 1, 'content']);
    expect(findUnsafeText({ ['key\u0000']: 1 })).toEqual(['key\u0000']);
    expect(findUnsafeText({ a: [1, true, null, 'fine'] })).toBeNull();
  });

  it('refuses U+0000 in a query with 400, except on a route that applies its own query rules', async () => {
    const app = Fastify();
    installErrorHandling(app);
    installInputGuards(app);
    app.get('/plain', async (request) => request.query);
    app.get('/own', { config: { ownQueryRules: true } }, async (request) => request.query);
    const plain = await app.inject({ method: 'GET', url: '/plain?path=%2Fplay%00' });
    expect(plain.statusCode).toBe(400);
    expect(plain.json().error.code).toBe('INVALID_TEXT');
    const own = await app.inject({ method: 'GET', url: '/own?path=%2Fplay%00' });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toEqual({ path: '/play\u0000' });
    await app.close();
  });
});
