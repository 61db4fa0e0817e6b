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

/** The provider whose published key format a key has: Anthropic's `sk-ant-…`, Google's `AIza…`; null for any other (OpenAI's and routers' keys share `sk-`). */
export function keyProviderOf(apiKey: string): Exclude<ProviderKind, 'openai'> | null {
  const key = apiKey.trim();
  if (/^sk-ant-/.test(key)) return 'anthropic';
  if (/^AIza[0-9A-Za-z_-]{20,}$/.test(key)) return 'gemini';
  return null;
}

/** The hosts where a provider's own keys are at home (its native API and its own OpenAI-compatible endpoint). */
const KEY_HOMES: Record<Exclude<ProviderKind, 'openai'>, RegExp> = { anthropic: /(^|\.)anthropic\.com$/, gemini: /(^|\.)googleapis\.com$/ };

/**
 * A key that is plainly another provider's for this connection: an Anthropic key (`sk-ant-`) on a
 * connection of another kind, or a Google key (`AIza`) on one not of kind Gemini, unless the base
 * URL is that provider's own host (Anthropic and Google also serve an OpenAI-compatible endpoint).
 * Returns the message to show, or null. Checked before the key is sent anywhere.
 */
export function keyForAnotherProvider(apiKey: string, kind: ProviderKind, baseUrl: string): string | null {
  const owner = keyProviderOf(apiKey);
  if (!owner || owner === kind) return null;
  let host = '';
  try {
    host = new URL(baseUrl).hostname.toLowerCase();
  } catch {
    // an unparsable URL is no provider's home
  }
  if (KEY_HOMES[owner].test(host)) return null;
  const prefix = owner === 'anthropic' ? 'sk-ant-' : 'AIza';
  return `this looks like ${owner === 'anthropic' ? 'an' : 'a'} ${PROVIDER_LABELS[owner]} key (${prefix}…), but the connection is ${PROVIDER_LABELS[kind]}${host ? ` at ${host}` : ''}: choose the kind ${PROVIDER_LABELS[owner]}, or enter this provider's own key. The key was not sent or saved.`;
}
