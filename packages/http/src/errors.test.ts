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
