import type { ChatRequest } from '@yumina/ai';
import type { WorldSettings } from '@yumina/world';

/**
 * The provider request fields of a world's generation settings (seed 002 §2.2): `temperature`,
 * `top_p`, `frequency_penalty`, `presence_penalty`, `top_k`, `min_p`, and `response_format:
 * {type: 'json_object'}` for structured output. Only what the world sets is sent (0 included);
 * an unset setting is absent from the request, never filled with a default, so the provider's own
 * default applies. Turns, regenerations, continues and the guest preview all use this.
 */
export function samplingRequest(settings: WorldSettings): Pick<ChatRequest, 'temperature' | 'extraBody'> {
  const extraBody: Record<string, unknown> = {};
  if (settings.topP !== undefined) extraBody.top_p = settings.topP;
  if (settings.frequencyPenalty !== undefined) extraBody.frequency_penalty = settings.frequencyPenalty;
  if (settings.presencePenalty !== undefined) extraBody.presence_penalty = settings.presencePenalty;
  if (settings.topK !== undefined) extraBody.top_k = settings.topK;
  if (settings.minP !== undefined) extraBody.min_p = settings.minP;
  if (settings.structuredOutput === true) extraBody.response_format = { type: 'json_object' };
  return { ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}), extraBody };
}
