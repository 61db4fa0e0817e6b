import type { ChatRequest } from '@yumina/ai';
import { SAMPLING_DEFAULTS, type WorldSettings } from '@yumina/world';


type Defaulted = keyof typeof SAMPLING_DEFAULTS;

/**
 * The provider request fields of a world's generation settings (seed 002 §2.2): `temperature`,
 * `top_p`, `frequency_penalty` and `presence_penalty` always (the seed's defaults when the world
 * does not set them: validation fills them, and a definition stored before it did still gets
 * them here), `top_k` and `min_p` only when the world sets them (0 included), and
 * `response_format: {type: 'json_object'}` for structured output. Turns, regenerations, continues
 * and the guest preview all use this.
 */
export function samplingRequest(
  settings: Omit<WorldSettings, Defaulted> & Partial<Pick<WorldSettings, Defaulted>>,
): Pick<ChatRequest, 'temperature' | 'extraBody'> {
  const extraBody: Record<string, unknown> = {
    top_p: settings.topP ?? SAMPLING_DEFAULTS.topP,
    frequency_penalty: settings.frequencyPenalty ?? SAMPLING_DEFAULTS.frequencyPenalty,
    presence_penalty: settings.presencePenalty ?? SAMPLING_DEFAULTS.presencePenalty,
  };
  if (settings.topK !== undefined) extraBody.top_k = settings.topK;
  if (settings.minP !== undefined) extraBody.min_p = settings.minP;
  if (settings.structuredOutput === true) extraBody.response_format = { type: 'json_object' };
  return { temperature: settings.temperature ?? SAMPLING_DEFAULTS.temperature, extraBody };
}
