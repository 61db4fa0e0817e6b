import { argumentsObject, toolSchema } from './anthropic.ts';
import { type ChatRequest, parseToolCalls } from './chat.ts';
import { AiInvalidResponseError } from './errors.ts';
import { isObject, type ListedModel, type NativeProtocol, num, type StreamStep } from './native-protocol.ts';

/**
 * Google Gemini's generateContent API: `POST {base}/models/{model}:streamGenerateContent?alt=sse`
 * (server-sent events) or `:generateContent` (JSON), `GET {base}/models`; the key in
 * `x-goog-api-key`.
 *
 * The platform's messages map as for Anthropic: system messages before the conversation become
 * `systemInstruction`, later ones user text; the assistant is the `model` role; consecutive turns
 * of one role are joined. Model ids are listed without their `models/` prefix.
 */

const FINISH_REASONS: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  BLOCKLIST: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
};

const modelPath = (model: string) => `/models/${encodeURIComponent(model.replace(/^models\//, ''))}`;

type Part = { text: string } | { functionCall: { name: string; args: Record<string, unknown> } } | { functionResponse: { name: string; response: { content: string } } };

export function geminiBody(request: ChatRequest): Record<string, unknown> {
  const system: Array<{ text: string }> = [];
  const contents: Array<{ role: 'user' | 'model'; parts: Part[] }> = [];
  for (const m of request.messages) {
    // tool turns: the model's calls as functionCall parts, their answers as functionResponse parts (by the function's name, carried in `name`)
    const parts: Part[] =
      m.role === 'tool'
        ? [{ functionResponse: { name: m.name ?? '', response: { content: m.content } } }]
        : [...(m.content ? [{ text: m.content }] : []), ...(m.toolCalls ?? []).map((c) => ({ functionCall: { name: c.name, args: argumentsObject(c.arguments) } }))];
    if (parts.length === 0) continue;
    if (m.role === 'system' && contents.length === 0) {
      system.push({ text: m.content });
      continue;
    }
    const role = m.role === 'assistant' ? 'model' : 'user';
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  const body: Record<string, unknown> = {};
  if (system.length) body.systemInstruction = { parts: system };
  body.contents = contents;
  if (request.tools?.length) {
    body.tools = [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: toolSchema(t.parameters) })) }];
    body.toolConfig = { functionCallingConfig: { mode: request.toolChoice === 'required' ? 'ANY' : request.toolChoice === 'none' ? 'NONE' : 'AUTO' } };
  }
  const config: Record<string, unknown> = {};
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  const extra = request.extraBody ?? {};
  if (typeof extra.top_p === 'number') config.topP = extra.top_p;
  if (typeof extra.top_k === 'number') config.topK = extra.top_k;
  if (typeof extra.frequency_penalty === 'number') config.frequencyPenalty = extra.frequency_penalty;
  if (typeof extra.presence_penalty === 'number') config.presencePenalty = extra.presence_penalty;
  if (isObject(extra.response_format) && extra.response_format.type === 'json_object') config.responseMimeType = 'application/json';
  if (Object.keys(config).length) body.generationConfig = config;
  return body;
}

function usageOf(raw: unknown): StreamStep['usage'] | undefined {
  if (!isObject(raw)) return undefined;
  const prompt = num(raw.promptTokenCount);
  const out = (num(raw.candidatesTokenCount) ?? 0) + (num(raw.thoughtsTokenCount) ?? 0);
  const cached = num(raw.cachedContentTokenCount);
  if (prompt === undefined) return undefined;
  return { tokensIn: prompt, tokensOut: out, ...(cached !== undefined ? { cachedTokensIn: cached } : {}) };
}

/** One answer (a whole response, or one streamed chunk) read. */
function stepOf(json: unknown): StreamStep {
  if (!isObject(json)) return {};
  if (isObject(json.error)) {
    const code = num(json.error.code) ?? 500;
    return { error: { status: code, bodyText: JSON.stringify(json) } };
  }
  const step: StreamStep = {};
  if (typeof json.responseId === 'string') step.id = json.responseId;
  if (typeof json.modelVersion === 'string') step.providerModel = json.modelVersion;
  const usage = usageOf(json.usageMetadata);
  if (usage) step.usage = usage;
  const feedback = isObject(json.promptFeedback) ? json.promptFeedback : null;
  if (feedback && typeof feedback.blockReason === 'string') {
    step.refusal = `The provider blocked the prompt (${feedback.blockReason}).`;
    step.finishReason = 'content_filter';
  }
  const candidate = Array.isArray(json.candidates) && isObject(json.candidates[0]) ? json.candidates[0] : null;
  if (candidate) {
    const parts = isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) {
      if (isObject(part) && isObject(part.functionCall) && typeof part.functionCall.name === 'string') {
        const call = part.functionCall;
        (step.toolCalls ??= []).push({ id: typeof call.id === 'string' ? call.id : undefined, name: call.name as string, arguments: JSON.stringify(isObject(call.args) ? call.args : {}) });
        continue;
      }
      if (!isObject(part) || typeof part.text !== 'string') continue;
      if (part.thought === true) step.reasoning = (step.reasoning ?? '') + part.text;
      else step.text = (step.text ?? '') + part.text;
    }
    if (typeof candidate.finishReason === 'string' && candidate.finishReason !== 'FINISH_REASON_UNSPECIFIED') {
      step.finishReason = FINISH_REASONS[candidate.finishReason] ?? candidate.finishReason.toLowerCase();
    }
  }
  return step;
}

function parseModels(json: unknown): { models: ListedModel[]; next: string | null } {
  if (!isObject(json)) throw new AiInvalidResponseError('Gemini sent a model list in an unknown shape.');
  const list = Array.isArray(json.models) ? json.models : [];
  const models = list
    .filter((m): m is Record<string, unknown> => isObject(m) && typeof m.name === 'string')
    .filter((m) => !Array.isArray(m.supportedGenerationMethods) || m.supportedGenerationMethods.includes('generateContent'))
    .map((m) => {
      const id = (m.name as string).replace(/^models\//, '');
      return { id, name: typeof m.displayName === 'string' ? m.displayName : id, contextLength: num(m.inputTokenLimit) ?? null, ownedBy: 'google' };
    });
  return { models, next: typeof json.nextPageToken === 'string' && json.nextPageToken ? json.nextPageToken : null };
}

/** Gemini's detail reasons that mean the key itself is wrong (it answers them with a 400). */
function keyRefused(body: unknown): boolean {
  if (!isObject(body) || !isObject(body.error)) return false;
  const details = Array.isArray(body.error.details) ? body.error.details : [];
  return body.error.status === 'UNAUTHENTICATED' || details.some((d) => isObject(d) && (d.reason === 'API_KEY_INVALID' || d.reason === 'API_KEY_SERVICE_BLOCKED'));
}

export const geminiProtocol: NativeProtocol = {
  label: 'Google Gemini',
  defaultVersionPath: '/v1beta',
  headers: (apiKey): Record<string, string> => (apiKey ? { 'x-goog-api-key': apiKey } : {}),
  completionPath: (request, stream) => `${modelPath(request.model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  body: (request) => geminiBody(request),
  parseCompletion(json, request) {
    if (!isObject(json) || (!Array.isArray(json.candidates) && !isObject(json.promptFeedback))) {
      throw new AiInvalidResponseError('Gemini answered 200 with a body that is not a response');
    }
    const step = stepOf(json);
    const usage = step.usage;
    const calls = parseToolCalls((step.toolCalls ?? []).map((c, i) => ({ id: c.id ?? `call_${i + 1}`, function: { name: c.name, arguments: c.arguments } })));
    return {
      ...(calls.length ? { toolCalls: calls } : {}),
      id: step.id ?? null,
      model: request.model,
      providerModel: step.providerModel ?? null,
      content: step.text ?? '',
      refusal: step.refusal ?? (step.finishReason === 'content_filter' && !step.text ? 'The model declined to answer.' : null),
      finishReason: calls.length ? 'tool_calls' : (step.finishReason ?? null),
      usage: usage?.tokensIn !== undefined && usage.tokensOut !== undefined ? (usage as { tokensIn: number; tokensOut: number }) : null,
    };
  },
  streamStep: stepOf,
  finishEndsStream: true,
  modelsPath: (token) => `/models?pageSize=1000${token ? `&pageToken=${encodeURIComponent(token)}` : ''}`,
  parseModels,
  errorStatus: (status, body) => (status === 400 && keyRefused(body) ? 401 : status),
};
