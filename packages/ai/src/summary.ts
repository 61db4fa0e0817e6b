import { type CountableMessage, type TokenCounter, trimHistoryCooperatively } from '@yumina/tokens';
import type { ChatMessage, ChatResult } from './chat.ts';
import {
  AiAbortedError,
  AiContentRefusalError,
  AiNetworkError,
  AiReasoningRequiredError,
  AiRateLimitError,
  AiTimeoutError,
  AiUpstreamError,
} from './errors.ts';
import { type MeteredResult, type MeteringContext, meteredComplete } from './metered.ts';

/**
 * Story summaries. The request disables reasoning and caps output. If the routed summary model
 * answers with a 400 because it must reason, or refuses the content, exactly one request goes to
 * the configured secondary summary model, on the same provider and key, with the same output cap
 * and the same billing and usage rules, out of the same attempt allowance. Success is recorded
 * under the model that answered. Authentication and malformed-request errors propagate unchanged.
 */

export interface SummarySettings {
  /** The routed summary model (often a free router model). */
  model: string;
  /** The secondary summary model for the one-step fallback; null disables the fallback. */
  fallbackModel: string | null;
  /** Output cap for every summary request. */
  maxOutputTokens: number;
  /** Requests one summary may use in total: retries of transient failures and the fallback share it. */
  attempts: number;
  /** Deadline per request. */
  timeoutMs?: number;
  /** Pause before retrying a transient failure (doubles each time). */
  retryDelayMs?: number;
}

export interface SummaryInput {
  /** The turns to fold into the summary, oldest first. */
  turns: ReadonlyArray<{ role: string; content: string }>;
  /** The summary so far, which the new one replaces. */
  previousSummary?: string | null;
  /** Extra instructions (the world's own summary prompt). */
  instructions?: string;
}

export interface SummaryResult {
  summary: string;
  /** The model that produced the summary (the fallback model after a fallback). */
  model: string;
  fellBack: boolean;
  /** Requests made. */
  attempts: number;
  usage: MeteredResult['usage'];
}

const SYSTEM_PROMPT =
  'You maintain the running summary of an interactive story. Rewrite the summary so it covers the previous summary and the new turns: ' +
  'keep names, places, relationships, promises, open threads and the current situation; drop small talk. ' +
  'Write in the story language, in past tense, as plain prose without headings. Output only the summary.';

export function summaryMessages(input: SummaryInput): ChatMessage[] {
  const transcript = input.turns.map((t) => `${t.role === 'assistant' ? 'Narrator' : t.role === 'user' ? 'Player' : t.role}: ${t.content}`).join('\n\n');
  const parts = [input.previousSummary ? `Summary so far:\n${input.previousSummary}` : 'There is no summary yet.', `New turns:\n${transcript}`];
  const system = input.instructions ? `${SYSTEM_PROMPT}\n\n${input.instructions}` : SYSTEM_PROMPT;
  return [
    { role: 'system', content: system },
    { role: 'user', content: parts.join('\n\n') },
  ];
}

/** A 200 that is a refusal: a structured `refusal`, or the content filter stopped it with nothing said. */
export function refusalOf(result: ChatResult): AiContentRefusalError | undefined {
  const filtered = result.finishReason === 'content_filter' && !result.content.trim();
  if (!result.refusal && !filtered) return undefined;
  const bodyText = JSON.stringify({ refusal: result.refusal, finish_reason: result.finishReason });
  return new AiContentRefusalError({ status: 200, bodyText, body: JSON.parse(bodyText), providerMessage: result.refusal, model: result.model });
}

function transient(err: unknown): boolean {
  return err instanceof AiRateLimitError || err instanceof AiUpstreamError || err instanceof AiNetworkError || err instanceof AiTimeoutError;
}

function fallbackWorthy(err: unknown): boolean {
  return err instanceof AiReasoningRequiredError || err instanceof AiContentRefusalError;
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new AiAbortedError({ cause: signal.reason }));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new AiAbortedError({ cause: signal?.reason }));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export async function summarize(ctx: MeteringContext, settings: SummarySettings, input: SummaryInput, options: { signal?: AbortSignal } = {}): Promise<SummaryResult> {
  const messages = summaryMessages(input);
  const allowance = Math.max(1, settings.attempts);
  let attempts = 0;
  let model = settings.model;
  let fellBack = false;
  let delay = settings.retryDelayMs ?? 500;
  for (;;) {
    attempts++;
    try {
      const result = await meteredComplete(
        ctx,
        { model, messages, maxTokens: settings.maxOutputTokens, reasoning: false },
        { purpose: 'summary', requestedModel: settings.model, signal: options.signal, timeoutMs: settings.timeoutMs, reject: refusalOf },
      );
      return { summary: result.content.trim(), model, fellBack, attempts, usage: result.usage };
    } catch (err) {
      const left = allowance - attempts;
      if (!fellBack && fallbackWorthy(err) && settings.fallbackModel && left > 0) {
        model = settings.fallbackModel;
        fellBack = true;
        continue;
      }
      // Transient failures of the routed model are retried within the allowance; the fallback is one request.
      if (!fellBack && transient(err) && left > 0) {
        await pause(delay, options.signal);
        delay *= 2;
        continue;
      }
      throw err;
    }
  }
}

export interface CondenseOptions {
  /** Prompt budget for the history, in tokens. */
  budget: number;
  /** Model the history is for (counting family). */
  model?: string | null;
  /** Summaries on and configured for this conversation; otherwise final trimming applies. */
  summarization: { ctx: MeteringContext; settings: SummarySettings; previousSummary?: string | null; instructions?: string } | null;
  signal?: AbortSignal;
}

export interface CondensedHistory<M> {
  /** The messages that go into the prompt, in order. */
  kept: M[];
  /** Older turns left out (summarized when a summary was made). */
  dropped: M[];
  /** The new summary to store and send before `kept`, when one was made. */
  summary: SummaryResult | null;
}

/**
 * Fits a history into its budget. Nothing to drop: unchanged. With summarization, the turns that
 * do not fit (room is left for a summary of `maxOutputTokens`) are summarized; without it, this is
 * the final trimming (pinned and newest kept, oldest dropped first), done cooperatively.
 */
export async function condenseHistory<M extends CountableMessage>(counter: TokenCounter, messages: readonly M[], options: CondenseOptions): Promise<CondensedHistory<M>> {
  const trim = (budget: number) => trimHistoryCooperatively(counter, messages, { budget: Math.max(0, budget), model: options.model, signal: options.signal });
  let decision = await trim(options.budget);
  if (decision.dropped.length > 0 && options.summarization) decision = await trim(options.budget - options.summarization.settings.maxOutputTokens);
  const kept = decision.kept.map((i) => messages[i]!);
  const dropped = decision.dropped.map((i) => messages[i]!);
  if (dropped.length === 0 || !options.summarization) return { kept, dropped, summary: null };
  const { ctx, settings, previousSummary, instructions } = options.summarization;
  const summary = await summarize(ctx, settings, { turns: dropped, previousSummary, instructions }, { signal: options.signal });
  return { kept, dropped, summary };
}
