import { NOTEBOOK_BOUNDS } from './limits.ts';

/**
 * Quote acceptance (seed §2.1.3): the model may pick a short exact quote of the current player
 * message. It is stored as a remembered player statement only if it occurs verbatim in that
 * message and does not resemble a credential. It is never a confirmed game event.
 */

export type QuoteRejection = 'empty' | 'too-long' | 'not-in-message' | 'credential-like';

export type QuoteDecision = { accepted: true; text: string } | { accepted: false; reason: QuoteRejection };

/** Well-known secret shapes. */
const SECRET_PATTERNS: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{8,}/, // OpenAI / Anthropic style keys (sk-, sk-proj-, sk-ant-)
  /\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{16,}/, // GitHub tokens
  /\bgithub_pat_[A-Za-z0-9_]{16,}/,
  /\bxox[abposr]-[A-Za-z0-9-]{8,}/, // Slack
  /\bAKIA[0-9A-Z]{12,}/, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{20,}/, // Google API key
  /\bey[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.?[A-Za-z0-9_-]*/, // JWT
  /-----BEGIN [A-Z ]*(?:PRIVATE KEY|CERTIFICATE)-----/,
  /\b(?:bearer|basic)\s+[A-Za-z0-9._~+/=-]{12,}/i,
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i, // credentials inside a URL
];

/** Words that announce a secret, in the three supported languages (and common variants). */
const SECRET_WORDS =
  /(?:(?<![\p{L}\p{N}])(?:pass(?:word|wd|phrase)s?|pwd|api[\s_-]?keys?|secrets?|tokens?|credentials?|private[\s_-]?keys?|access[\s_-]?keys?|auth(?:orization)?[\s_-]?codes?|otp|pin|contrase[ñn]as?|claves?|c[oó]digos?)(?![\p{L}\p{N}])|密码|口令|密钥|令牌|验证码)/iu;

/** A single long run with letters and digits mixed, like a generated secret. */
function looksRandom(token: string): boolean {
  if (token.length < 20) return false;
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[_\-+/=.]/].filter((r) => r.test(token)).length;
  if (/^[0-9a-f]{32,}$/i.test(token)) return true; // hex digests and keys
  return classes >= 3 || (classes >= 2 && /[0-9]/.test(token) && token.length >= 28);
}

/** Whether text resembles a credential: API keys, tokens, passwords, long secrets. */
export function resemblesCredential(text: string): boolean {
  if (SECRET_PATTERNS.some((p) => p.test(text))) return true;
  if (SECRET_WORDS.test(text)) return true;
  return text.split(/[\s"'`,;()<>[\]{}]+/).some(looksRandom);
}

/**
 * Decide whether to remember `quote` from `message`. The quote must occur exactly (after trimming
 * its edges) in the message. The quote and the words just before it in the message are both
 * checked, so "my password is hunter2" does not let "hunter2" through.
 */
export function acceptQuote(quote: unknown, message: string): QuoteDecision {
  if (typeof quote !== 'string') return { accepted: false, reason: 'empty' };
  const text = quote.trim();
  if (!text) return { accepted: false, reason: 'empty' };
  if (Array.from(text).length > NOTEBOOK_BOUNDS.statementMaxChars) return { accepted: false, reason: 'too-long' };
  const at = message.indexOf(text);
  if (at < 0) return { accepted: false, reason: 'not-in-message' };
  if (resemblesCredential(text)) return { accepted: false, reason: 'credential-like' };
  // Every occurrence's lead-in: a secret announced just before the quoted words.
  for (let i = at; i >= 0; i = message.indexOf(text, i + 1)) {
    const before = message.slice(Math.max(0, i - 40), i);
    if (SECRET_WORDS.test(before) || SECRET_PATTERNS.some((p) => p.test(before + text))) {
      return { accepted: false, reason: 'credential-like' };
    }
  }
  return { accepted: true, text };
}
