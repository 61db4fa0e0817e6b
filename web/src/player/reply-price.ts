/**
 * The price of a reply and of a session as the player reads them (issue 47 point 4): on platform
 * credits, the prompt's tokens (of them read from the provider's cache), the reply's and the
 * credits charged; on the player's own key, its tokens and, where the platform prices the model,
 * what the platform would have charged ("≈").
 */
import { count } from '../lib/text.ts';
import type { PlayerMessage, SessionSpent } from './player-types.ts';

const n = (v: number) => v.toLocaleString('en');

/** The line under a reply and its longer title; null for a message with no usage to show. */
export function replyPrice(m: PlayerMessage): { text: string; title: string } | null {
  if (m.role !== 'assistant' || m.status !== 'complete' || m.tokenCount === null) return null;
  const sent = m.promptTokens ?? null;
  const cached = typeof m.cachedTokens === 'number' && m.cachedTokens > 0 ? m.cachedTokens : null;
  const written = typeof m.cacheWriteTokens === 'number' && m.cacheWriteTokens > 0 ? m.cacheWriteTokens : null;
  const parts = [
    sent !== null ? `${n(sent)} sent` : null,
    cached !== null ? `${n(cached)} of them read from the provider's cache` : null,
    written !== null ? `${n(written)} written to its cache` : null,
    `${n(m.tokenCount)} written`,
  ].filter(Boolean);
  const title = `${parts.join(' · ')}${m.model ? ` · ${m.model}` : ''}`;
  if (typeof m.creditsCharged === 'number') {
    const tokens = sent !== null ? `${n(sent)} in${cached !== null ? ` (${n(cached)} cached)` : ''} · ${n(m.tokenCount)} out` : `${n(m.tokenCount)} out`;
    return { text: `${tokens} · ${count(m.creditsCharged, 'credit')}`, title };
  }
  const total = (sent ?? 0) + m.tokenCount;
  const estimate = typeof m.creditsEstimate === 'number' ? ` · ≈ ${count(m.creditsEstimate, 'credit')} on the platform` : '';
  return { text: `Own key: ${count(total, 'token')}${cached !== null ? ` (${n(cached)} cached)` : ''}${estimate}`, title };
}

/** The session's total: short (the head) and in full (the session menu); null before its first reply. */
export function sessionSpent(spent: SessionSpent | undefined): { short: string; full: string } | null {
  if (!spent || spent.replies === 0) return null;
  const tokens = spent.tokensIn + spent.tokensOut;
  const money = spent.credits > 0 ? count(spent.credits, 'credit') : spent.creditsEstimate > 0 ? `own key, ≈ ${count(spent.creditsEstimate, 'credit')}` : 'own key';
  const cached = spent.cachedTokens > 0 ? ` (${n(spent.cachedTokens)} cached)` : '';
  return {
    short: `This session: ${money} · ${count(tokens, 'token')}`,
    full: `${count(spent.replies, 'reply', 'replies')}: ${n(spent.tokensIn)} tokens in${cached} · ${n(spent.tokensOut)} out · ${spent.credits > 0 ? count(spent.credits, 'credit') : money}`,
  };
}
