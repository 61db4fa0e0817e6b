import { type CallOptions, type ChatMessage, completeChat, type PrivateConnectionSettings, type PrivateNetworkAccess } from '@yumina/ai';
import { COMPANION_LIMITS } from '@yumina/companion';
import { HttpError } from '@yumina/http';

/**
 * One companion completion on the account's private connection (seed 001 §4 behaviour 1): 20 s
 * deadline, 500 output tokens, no automatic retry. The caller's signal (client went away, level
 * changed) aborts the provider call; the platform's first-byte and idle deadlines (`options`) apply
 * as to every call. Provider failures become answers with the shared error shape; the provider's
 * own message is not echoed, since it may quote request details.
 */
export async function companionCompletion(
  connection: PrivateConnectionSettings,
  model: string,
  messages: ChatMessage[],
  options: Pick<CallOptions, 'signal' | 'firstByteTimeoutMs' | 'idleTimeoutMs'>,
  privateNetwork: PrivateNetworkAccess,
): Promise<string> {
  try {
    const result = await completeChat(
      { baseUrl: connection.baseUrl, apiKey: connection.apiKey, privateNetwork, ...(connection.kind && connection.kind !== 'openai' ? { kind: connection.kind } : {}) },
      { model, messages, maxTokens: COMPANION_LIMITS.outputTokens, temperature: 0.8 },
      { ...options, timeoutMs: COMPANION_LIMITS.generationDeadlineMs },
    );
    if (!result.content.trim()) {
      if (result.refusal) throw new HttpError(502, 'AI_CONTENT_REFUSAL', 'The model declined to answer that.');
      throw new HttpError(502, 'AI_EMPTY_REPLY', 'The model sent an empty reply.');
    }
    return result.content;
  } catch (err) {
    if (err instanceof HttpError) throw err;
    const code = (err as { code?: unknown }).code;
    switch (code) {
      case 'AI_PROVIDER_TIMEOUT':
        throw new HttpError(504, 'AI_PROVIDER_TIMEOUT', 'The model did not answer within 20 seconds.');
      case 'AI_ABORTED':
        throw new HttpError(499 as number, 'CANCELLED', 'The request was cancelled.');
      case 'AI_PROVIDER_AUTH':
        throw new HttpError(502, 'AI_PROVIDER_AUTH', 'Your AI provider refused the saved key. Check /app/settings#ai-config.');
      case 'AI_PROVIDER_RATE_LIMITED':
        throw new HttpError(502, 'AI_PROVIDER_RATE_LIMITED', 'Your AI provider is rate limiting requests right now.');
      case 'AI_PROVIDER_UNREACHABLE':
        throw new HttpError(502, 'AI_PROVIDER_UNREACHABLE', 'Your AI provider could not be reached.');
      case 'AI_CONTENT_REFUSAL':
        throw new HttpError(502, 'AI_CONTENT_REFUSAL', 'The model declined to answer that.');
      default:
        throw new HttpError(502, 'AI_PROVIDER_ERROR', 'Your AI provider answered with an error.');
    }
  }
}
