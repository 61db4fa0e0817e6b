/**
 * The wire protocols of an AI connection, as the server knows them (packages/ai/src/kinds.ts, whose
 * host rule this repeats: the web app does not depend on the server's AI package).
 */
export type ProviderKind = 'openai' | 'anthropic' | 'gemini';

export const PROVIDER_KIND_OPTIONS: Array<{ kind: ProviderKind; label: string }> = [
  { kind: 'openai', label: 'OpenAI-compatible' },
  { kind: 'anthropic', label: 'Anthropic' },
  { kind: 'gemini', label: 'Google Gemini' },
];

/** The kind a base URL's host names; anything else is OpenAI-compatible. */
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
