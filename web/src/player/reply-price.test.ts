import { describe, expect, it } from 'vitest';
import type { PlayerMessage } from './player-types.ts';
import { replyPrice, sessionSpent } from './reply-price.ts';

const reply = (over: Partial<PlayerMessage>): PlayerMessage => ({
  id: 'm',
  position: 1,
  role: 'assistant',
  content: 'x',
  status: 'complete',
  errorMessage: null,
  stateChanges: [],
  swipes: [],
  activeSwipeIndex: 0,
  stateSnapshot: null,
  model: 'story-model',
  tokenCount: 80,
  promptTokens: 2200,
  generationTimeMs: 1,
  compacted: false,
  attachments: [],
  createdAt: '',
  ...over,
});

describe('the price of a reply as the player reads it', () => {
  it('on credits: tokens in (of them cached), out and the credits', () => {
    expect(replyPrice(reply({ creditsCharged: 3, cachedTokens: 2000, cacheWriteTokens: 0 }))).toEqual({
      text: '2,200 in (2,000 cached) · 80 out · 3 credits',
      title: "2,200 sent · 2,000 of them read from the provider's cache · 80 written · story-model",
    });
    expect(replyPrice(reply({ creditsCharged: 1, cachedTokens: null, cacheWriteTokens: 1800 }))!.text).toBe('2,200 in · 80 out · 1 credit');
    expect(replyPrice(reply({ creditsCharged: 1, cacheWriteTokens: 1800 }))!.title).toBe('2,200 sent · 1,800 written to its cache · 80 written · story-model');
  });

  it('on the player’s own key: its tokens, and the platform’s estimate only when it prices the model', () => {
    expect(replyPrice(reply({ creditsCharged: null, cachedTokens: 1500, creditsEstimate: 3 }))!.text).toBe('Own key: 2,280 tokens (1,500 cached) · ≈ 3 credits on the platform');
    expect(replyPrice(reply({ creditsCharged: null, creditsEstimate: null }))!.text).toBe('Own key: 2,280 tokens');
  });

  it('nothing for a player’s message, a reply still streaming or one without figures', () => {
    expect(replyPrice(reply({ role: 'user' }))).toBeNull();
    expect(replyPrice(reply({ status: 'streaming' }))).toBeNull();
    expect(replyPrice(reply({ tokenCount: null }))).toBeNull();
  });

  it('the session’s total: credits, or the own key with its estimate; nothing before the first reply', () => {
    expect(sessionSpent(undefined)).toBeNull();
    expect(sessionSpent({ replies: 0, tokensIn: 0, cachedTokens: 0, tokensOut: 0, credits: 0, creditsEstimate: 0 })).toBeNull();
    expect(sessionSpent({ replies: 2, tokensIn: 4200, cachedTokens: 3500, tokensOut: 180, credits: 7, creditsEstimate: 0 })).toEqual({
      short: 'This session: 7 credits · 4,380 tokens',
      full: '2 replies: 4,200 tokens in (3,500 cached) · 180 out · 7 credits',
    });
    expect(sessionSpent({ replies: 1, tokensIn: 2000, cachedTokens: 0, tokensOut: 100, credits: 0, creditsEstimate: 4 })).toEqual({
      short: 'This session: own key, ≈ 4 credits · 2,100 tokens',
      full: '1 reply: 2,000 tokens in · 100 out · own key, ≈ 4 credits',
    });
  });
});
