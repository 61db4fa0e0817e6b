import { describe, expect, it } from 'vitest';
import { toAnswer } from './errors.ts';

/** An error shaped as packages/ai's provider errors are: a stable code, and the provider's Retry-After when it sent one. */
const providerFailure = (code: string, retryAfterSeconds: number | null) => Object.assign(new Error('provider said no'), { code, retryAfterSeconds });

describe('provider errors as HTTP answers', () => {
  it('a provider’s Retry-After is passed on; without one no header is invented', () => {
    expect(toAnswer(providerFailure('AI_PROVIDER_RATE_LIMITED', null))).toEqual({
      status: 429,
      body: { error: { code: 'AI_PROVIDER_RATE_LIMITED', message: 'The AI provider is limiting requests right now. Try again shortly.' } },
      headers: {},
    });
    expect(toAnswer(providerFailure('AI_PROVIDER_RATE_LIMITED', 12)).headers).toEqual({ 'retry-after': '12' });
    expect(toAnswer(providerFailure('AI_PROVIDER_UPSTREAM', 4))).toMatchObject({ status: 502, headers: { 'retry-after': '4' } });
  });
});

describe('a database restarting or unreachable (the chaos drill, issue 51)', () => {
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });
  it('answers 503 DB_UNAVAILABLE with Retry-After, never 500, and without PostgreSQL’s words', () => {
    for (const err of [
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('57P03', 'the database system is starting up'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED', errno: -111 }),
      new Error('Connection terminated unexpectedly'),
      new Error('a wrapper', { cause: pgError('08006', 'connection failure') }),
    ]) {
      const answer = toAnswer(err);
      expect(answer.status).toBe(503);
      expect(answer.headers).toEqual({ 'retry-after': '2' });
      expect((answer.body as { error: { code: string; message: string } }).error.code).toBe('DB_UNAVAILABLE');
      expect(JSON.stringify(answer.body)).not.toMatch(/5432|terminat|ECONN|administrator/);
    }
  });
  it('other failures stay 500 INTERNAL, and a provider’s unreachable stays its own', () => {
    expect(toAnswer(pgError('23505', 'duplicate key value violates unique constraint')).status).toBe(500);
    expect(toAnswer(new Error('boom')).status).toBe(500);
    expect(toAnswer(Object.assign(new Error('connect ECONNREFUSED'), { code: 'AI_PROVIDER_UNREACHABLE' })).body).toMatchObject({ error: { code: 'AI_PROVIDER_UNREACHABLE' } });
  });
});
