/**
 * The wire protocols a provider can speak. `openai`: OpenAI-compatible chat completions (OpenAI,
 * OpenRouter, DeepSeek, Ollama, vLLM…); `anthropic`: the Anthropic Messages API; `gemini`: Google
 * Gemini's generateContent API. No Node built-ins here: `@yumina/ai/kinds` is also what config and
 * the web app read the rule from.
 */
export const PROVIDER_KINDS = ['openai', 'anthropic', 'gemini'] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** The kind's name as a person reads it. */
export const PROVIDER_LABELS: Record<ProviderKind, string> = { openai: 'OpenAI-compatible', anthropic: 'Anthropic', gemini: 'Google Gemini' };

/**
 * The kind a base URL's host names: Anthropic's API host → `anthropic`, Gemini's API host →
 * `gemini`, anything else (and anything unparsable) → `openai`. A rule on the host name only.
 */
export function providerKindOf(baseUrl: string): ProviderKind {
  let host: string;
  try {
    host = new URL(baseUrl.trim()).hostname.toLowerCase();
  } catch {
    return 'openai';
  }
  if (host === 'api.anthropic.com') return 'anthropic';
  if (host === 'generativelanguage.googleapis.com') return 'gemini';
  return 'openai';
}
