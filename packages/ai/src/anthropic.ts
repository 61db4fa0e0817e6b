import { type ChatMessage, type ChatRequest, parseToolCalls, type ToolCall } from './chat.ts';
import { AiInvalidResponseError } from './errors.ts';
import { isObject, type ListedModel, type NativeProtocol, num, type StreamStep } from './native-protocol.ts';

/**
 * The Anthropic Messages API: `POST {base}/messages` (JSON, or server-sent events with `stream`),
 * `GET {base}/models`; the key in `x-api-key`, the API version in `anthropic-version`.
 *
 * The platform's messages map as follows: the system messages before the first user or assistant
 * message become the request's `system` blocks (one block each, in order); a system message later
 * in the conversation (a lorebook entry placed at a depth) becomes user text; consecutive messages
 * of one role are joined, since the API alternates roles; a conversation that opens with the
 * assistant (a world's greeting) gets a short user turn before it, since the API opens with the user.
 */

export const ANTHROPIC_VERSION = '2023-06-01';
/** `max_tokens` is required by the API; this is used when the request sets none. */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;
/** The user turn put before a conversation that opens with the assistant. */
export const ANTHROPIC_OPENING_USER_TURN = '[Start]';

const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'content_filter',
  tool_use: 'tool_calls',
  pause_turn: 'stop',
};

type Block = { type: 'text'; text: string; cache_control?: { type: 'ephemeral' } };
type WireMessage = { role: 'user' | 'assistant'; content: string | Block[] };
type ContentBlock = Block | { type: 'tool_use'; id: string; name: string; input: unknown } | { type: 'tool_result'; tool_use_id: string; content: string };

/** A tool call's arguments as the object Anthropic's `tool_use.input` holds (text that is not a JSON object: an empty one). */
export function argumentsObject(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A tool's parameter schema without the `$schema` keyword (the APIs take the schema's body). */
export function toolSchema(parameters: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _schema, ...rest } = parameters;
  return rest;
}

/**
 * With tools (or tool turns in the conversation) messages are content blocks: an assistant
 * message's calls become `tool_use` blocks, a `tool` message a `tool_result` block of the user turn
 * that follows, consecutive blocks of one role joined into one turn.
 */
function toolingBody(request: ChatRequest, system: Block[]): Array<{ role: 'user' | 'assistant'; content: ContentBlock[] }> {
  const messages: Array<{ role: 'user' | 'assistant'; content: ContentBlock[] }> = [];
  const blocksOf = (m: ChatMessage): ContentBlock[] => {
    if (m.role === 'tool') return [{ type: 'tool_result', tool_use_id: m.toolCallId ?? '', content: m.content || '(empty)' }];
    const blocks: ContentBlock[] = m.content ? [{ type: 'text', text: m.content }] : [];
    for (const call of m.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObject(call.arguments) });
    return blocks;
  };
  for (const m of request.messages) {
    if (m.role === 'system' && messages.length === 0) {
      if (m.content) system.push({ type: 'text', text: m.content });
      continue;
    }
    const blocks = blocksOf(m);
    if (blocks.length === 0) continue;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const last = messages.at(-1);
    if (last && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  }
  if (messages[0]?.role !== 'user') messages.unshift({ role: 'user', content: [{ type: 'text', text: ANTHROPIC_OPENING_USER_TURN }] });
  return messages;
}

/** Anthropic's limit of `cache_control` breakpoints in one request. */
export const ANTHROPIC_MAX_CACHE_BREAKPOINTS = 4;
const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * A message's blocks as sent. In a request with breakpoints, one text block per platform message
 * (a lone block as a plain string, which the API reads as the same block): the breakpoint sits at
 * the end of its own block, what follows it in the same turn (fired entries, the state block)
 * stays outside the cached prefix, and a message renders the same whether or not it carries the
 * breakpoint (a joined text would not, and the next turn's prefix would differ). Without
 * breakpoints, the blocks joined by a blank line.
 */
const wireContent = (blocks: Block[], cached: boolean): string | Block[] =>
  !cached ? blocks.map((block) => block.text).join('\n\n') : blocks.length === 1 && !blocks[0]!.cache_control ? blocks[0]!.text : blocks;

/**
 * Prompt-cache breakpoints (issue 47): a message marked `cache` (the end of the prompt's stable
 * head; the latest history message) gets `cache_control: {type: "ephemeral"}` on its block. The
 * API refuses more than four, so only the last four marks are kept (the rolling one included).
 */
export function anthropicBody(request: ChatRequest, stream: boolean): Record<string, unknown> {
  const system: Block[] = [];
  if (request.tools !== undefined || request.messages.some((m) => m.role === 'tool' || m.toolCalls?.length)) {
    const messages = toolingBody(request, system);
    const body: Record<string, unknown> = { model: request.model, max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS };
    if (system.length) body.system = system;
    body.messages = messages;
    if (request.tools?.length) {
      body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: toolSchema(t.parameters) }));
      body.tool_choice = { type: request.toolChoice === 'required' ? 'any' : (request.toolChoice ?? 'auto') };
    }
    if (request.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, request.temperature));
    if (stream) body.stream = true;
    return body;
  }
  const turns: Array<{ role: 'user' | 'assistant'; blocks: Block[] }> = [];
  let marks = request.messages.filter((m) => m.cache && m.content).length;
  for (const m of request.messages) {
    if (!m.content) continue; // the API refuses empty text
    const block: Block = { type: 'text', text: m.content };
    if (m.cache && marks-- <= ANTHROPIC_MAX_CACHE_BREAKPOINTS) block.cache_control = EPHEMERAL;
    if (m.role === 'system' && turns.length === 0) {
      system.push(block);
      continue;
    }
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last && last.role === role) last.blocks.push(block);
    else turns.push({ role, blocks: [block] });
  }
  const cached = request.messages.some((m) => m.cache);
  const messages: WireMessage[] = turns.map((turn) => ({ role: turn.role, content: wireContent(turn.blocks, cached) }));
  if (messages[0]?.role !== 'user') messages.unshift({ role: 'user', content: ANTHROPIC_OPENING_USER_TURN });
  const body: Record<string, unknown> = { model: request.model, max_tokens: request.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS };
  if (system.length) body.system = system;
  body.messages = messages;
  // Anthropic's temperature runs from 0 to 1
  if (request.temperature !== undefined) body.temperature = Math.min(1, Math.max(0, request.temperature));
  const extra = request.extraBody ?? {};
  if (typeof extra.top_p === 'number') body.top_p = extra.top_p;
  if (typeof extra.top_k === 'number') body.top_k = extra.top_k;
  if (stream) body.stream = true;
  return body;
}

function usageOf(raw: unknown): StreamStep['usage'] | undefined {
  if (!isObject(raw)) return undefined;
  const input = num(raw.input_tokens);
  const read = num(raw.cache_read_input_tokens);
  const write = num(raw.cache_creation_input_tokens);
  const out = num(raw.output_tokens);
  const usage: NonNullable<StreamStep['usage']> = {};
  // input_tokens counts only what follows the last cache breakpoint: the prompt is all three
  if (input !== undefined || read !== undefined || write !== undefined) usage.tokensIn = (input ?? 0) + (read ?? 0) + (write ?? 0);
  if (read !== undefined) usage.cachedTokensIn = read;
  if (write !== undefined) usage.cacheWriteTokensIn = write;
  if (out !== undefined) usage.tokensOut = out;
  return usage;
}

function parseModels(json: unknown): { models: ListedModel[]; next: string | null } {
  if (!isObject(json) || !Array.isArray(json.data)) throw new AiInvalidResponseError('Anthropic sent a model list in an unknown shape.');
  const models = json.data
    .filter((m): m is Record<string, unknown> => isObject(m) && typeof m.id === 'string')
    .map((m) => ({ id: m.id as string, name: typeof m.display_name === 'string' ? m.display_name : (m.id as string), contextLength: null, ownedBy: 'anthropic' }));
  const next = json.has_more === true && typeof json.last_id === 'string' ? json.last_id : null;
  return { models, next };
}

export const anthropicProtocol: NativeProtocol = {
  label: 'Anthropic',
  defaultVersionPath: '/v1',
  headers: (apiKey) => ({ 'anthropic-version': ANTHROPIC_VERSION, ...(apiKey ? { 'x-api-key': apiKey } : {}) }),
  completionPath: () => '/messages',
  body: anthropicBody,
  parseCompletion(json, request) {
    if (!isObject(json) || !Array.isArray(json.content)) throw new AiInvalidResponseError('Anthropic answered 200 with a body that is not a message');
    const content = json.content
      .filter((b): b is Record<string, unknown> => isObject(b) && b.type === 'text' && typeof b.text === 'string')
      .map((b) => b.text as string)
      .join('');
    const usage = usageOf(json.usage);
    const stop = typeof json.stop_reason === 'string' ? json.stop_reason : null;
    const calls: ToolCall[] = parseToolCalls(
      json.content
        .filter((b): b is Record<string, unknown> => isObject(b) && b.type === 'tool_use')
        .map((b) => ({ id: b.id, function: { name: b.name, arguments: JSON.stringify(isObject(b.input) ? b.input : {}) } })),
    );
    return {
      ...(calls.length ? { toolCalls: calls } : {}),
      id: typeof json.id === 'string' ? json.id : null,
      model: request.model,
      providerModel: typeof json.model === 'string' ? json.model : null,
      content,
      refusal: stop === 'refusal' && !content ? 'The model declined to answer.' : null,
      finishReason: stop ? (STOP_REASONS[stop] ?? stop) : null,
      usage: usage?.tokensIn !== undefined && usage.tokensOut !== undefined ? (usage as { tokensIn: number; tokensOut: number }) : null,
    };
  },
  streamStep(json) {
    if (!isObject(json)) return {};
    switch (json.type) {
      case 'message_start': {
        const message = isObject(json.message) ? json.message : {};
        return { id: typeof message.id === 'string' ? message.id : undefined, providerModel: typeof message.model === 'string' ? message.model : undefined, usage: usageOf(message.usage) };
      }
      case 'content_block_start': {
        const block = isObject(json.content_block) ? json.content_block : {};
        if (block.type !== 'tool_use') return {};
        return { toolCall: { index: num(json.index) ?? 0, id: typeof block.id === 'string' ? block.id : undefined, name: typeof block.name === 'string' ? block.name : undefined } };
      }
      case 'content_block_delta': {
        const delta = isObject(json.delta) ? json.delta : {};
        if (delta.type === 'text_delta' && typeof delta.text === 'string') return { text: delta.text };
        if (delta.type === 'input_json_delta' && typeof delta.partial_json === 'string') return { toolCall: { index: num(json.index) ?? 0, arguments: delta.partial_json } };
        if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') return { reasoning: delta.thinking };
        return {};
      }
      case 'message_delta': {
        const delta = isObject(json.delta) ? json.delta : {};
        const stop = typeof delta.stop_reason === 'string' ? delta.stop_reason : undefined;
        return {
          usage: usageOf(json.usage),
          finishReason: stop ? (STOP_REASONS[stop] ?? stop) : undefined,
          refusal: stop === 'refusal' ? 'The model declined to answer.' : undefined,
        };
      }
      case 'message_stop':
        return { end: true };
      case 'error': {
        const type = isObject(json.error) && typeof json.error.type === 'string' ? json.error.type : '';
        const status = type === 'overloaded_error' ? 529 : type === 'rate_limit_error' ? 429 : type === 'invalid_request_error' ? 400 : 500;
        return { error: { status, bodyText: JSON.stringify(json) } };
      }
      default:
        return {}; // ping, content_block_stop
    }
  },
  finishEndsStream: false,
  modelsPath: (after) => `/models?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ''}`,
  parseModels,
  errorStatus: (status) => status,
};
