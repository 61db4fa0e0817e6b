import type { ChatRequest, ChatResult, Usage } from './chat.ts';

/**
 * What a native wire protocol (Anthropic Messages, Gemini generateContent) tells the shared
 * transport in native.ts: where to send, what to send, and how to read what comes back. Pure
 * functions of JSON, no I/O.
 */

/** One model of a provider's list. */
export interface ListedModel {
  id: string;
  name: string;
  contextLength: number | null;
  ownedBy: string | null;
}

/** What one streamed event says. */
export interface StreamStep {
  text?: string;
  reasoning?: string;
  id?: string;
  providerModel?: string;
  /** Usage figures that arrived (merged into what arrived before). */
  usage?: Partial<Usage>;
  finishReason?: string;
  refusal?: string;
  /** An error event inside the stream: its HTTP-like status and the error body as JSON text. */
  error?: { status: number; bodyText: string };
  /** The provider ended the stream on purpose (Anthropic's message_stop). */
  end?: boolean;
  /** A piece of a tool call (its start with id and name, or a fragment of its arguments' JSON), by the call's index. */
  toolCall?: { index: number; id?: string; name?: string; arguments?: string };
  /** Whole tool calls in one event (Gemini sends each function call complete). */
  toolCalls?: Array<{ id?: string; name: string; arguments: string }>;
}

export interface NativeProtocol {
  /** The provider's name, for messages. */
  label: string;
  /** The version path appended to a base URL that has none. */
  defaultVersionPath: string;
  headers(apiKey: string | null): Record<string, string>;
  completionPath(request: ChatRequest, stream: boolean): string;
  body(request: ChatRequest, stream: boolean): Record<string, unknown>;
  /** A non-streamed answer's JSON (throws AiInvalidResponseError when it is not one). */
  parseCompletion(json: unknown, request: ChatRequest): Omit<ChatResult, 'truncated'>;
  /** One streamed event's JSON. */
  streamStep(json: unknown): StreamStep;
  /** Whether a stream that closed without an explicit end but with a finish reason is complete (Gemini has no end event). */
  finishEndsStream: boolean;
  modelsPath(pageToken: string | null): string;
  parseModels(json: unknown): { models: ListedModel[]; next: string | null };
  /** The status used to classify an error answer (Gemini answers an invalid key with a 400). */
  errorStatus(status: number, body: unknown): number;
}

/** Finish reasons in OpenAI's words, which the rest of the platform reads. */
export type FinishReason = 'stop' | 'length' | 'content_filter' | 'tool_calls';

export const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
