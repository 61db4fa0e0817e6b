import { type ChatMessage, cleanProviderText, condenseHistory, meteredStream, type MeteringContext } from '@yumina/ai';
import { sharedTokenCounter } from '@yumina/tokens';
import { packPrompt } from '@yumina/conversations';
import {
  assemblePrompt,
  type HistoryMessage,
  type PartyMember,
  type Persona,
  runTurn,
  type TurnResult,
  toCacheMarkedMessages,
  type WorldDefinition,
  type WorldState,
} from '@yumina/world';
import type { AppContext } from '../context.ts';
import { creditsForUsage } from '@yumina/billing';
import { meteringFor, platformPrice } from '../ai/metering.ts';
import { enginePersona } from './persona.ts';
import { samplingRequest } from './sampling.ts';
import { type SentPrompt, sentPromptOf } from './sent-prompt.ts';
import type { Swipe } from './model.ts';

export interface TurnInput {
  accountId: string;
  accountName: string | null;
  sessionId: string;
  seed: string;
  world: WorldDefinition;
  /** World state before this turn. */
  state: WorldState;
  /** Complete messages before this turn's user message, oldest first. */
  history: HistoryMessage[];
  userMessage: string;
  /** The conversation's story summary so far, if any. */
  summary?: string | null;
  /** The session's memory (prompt step 9), edited by the player. */
  memory?: string | null;
  /** Reply text so far, for "continue". */
  prefix?: string;
  signal: AbortSignal;
  /** Called once the prompt is built, right before the provider is asked (the send path gives its admission slot back then). */
  onPromptReady?(): void;
  onDelta(text: string): void;
  /** Reasoning deltas of models that stream them (never part of the reply). */
  onReasoning?(text: string): void;
  /** The account's metering context and persona when the caller read them already (the send path reads them while it stores the messages). */
  metering?: MeteringContext;
  /**
   * Without `metering`: the world whose interface choices (world_ai_choices) apply to the account's
   * provider and model. A room's turn passes none: the host's account-wide choice pays, as the room
   * showed before it opened.
   */
  choicesOfWorld?: string;
  persona?: Persona | null;
  /** A room's players (docs/ROOMS.md): the prompt names and describes each; `accountName` and `persona` are the round's newest writer's. */
  party?: readonly PartyMember[];
}

export interface TurnOutput {
  /** A new story summary made for this turn (to store on the session). */
  summary: string | null;
  /** How many of the oldest history messages that summary folded in (0 without a new summary). */
  compactedCount: number;
  rawReply: string;
  result: TurnResult;
  model: string;
  tokenCount: number;
  generationTimeMs: number;
  /** The reply reached AI_REPLY_MAX_BYTES and was cut there. */
  truncated: boolean;
  /** The prompt's tokens (the provider's figure, or counted here). */
  promptTokens: number;
  /** Platform credits the turn's calls were charged (its summary's included); null on the player's own connection. */
  creditsCharged: number | null;
  /** Of the prompt's tokens: read from the provider's cache, and written to it (null when the provider did not say). */
  cachedTokens: number | null;
  cacheWriteTokens: number | null;
  /** On the player's own connection: the reply at the platform's price of its model, when the price table names the model (else null). */
  creditsEstimate: number | null;
  /** What was sent, kept with the reply for the player's "what was sent" (./sent-prompt.ts). */
  sentPrompt: SentPrompt;
}

/** What a reply's row keeps of the turn that wrote it (completeTurn and a group reply's write): its model, counts, cost, what was sent, a new summary. */
export const replyFigures = (out: TurnOutput) => ({
  model: out.model,
  tokenCount: out.tokenCount,
  generationTimeMs: out.generationTimeMs,
  truncated: out.truncated,
  promptTokens: out.promptTokens,
  creditsCharged: out.creditsCharged,
  cachedTokens: out.cachedTokens,
  cacheWriteTokens: out.cacheWriteTokens,
  creditsEstimate: out.creditsEstimate,
  sentPrompt: packPrompt(out.sentPrompt),
  summary: out.summary,
  compactedCount: out.compactedCount,
});

/** A reply's alternative as a turn wrote it: its text, raw text, and the state it leads to. */
export const swipeOf = (out: TurnOutput): Swipe => ({
  content: out.result.displayText,
  rawContent: out.rawReply,
  snapshot: out.result.state,
  stateChanges: out.result.stateChanges,
});

/**
 * The metering context with its credit gate watched: the reservations the turn's official calls
 * make, so that what they were charged can be read once they are settled.
 */
function watchedCredits(metering: MeteringContext): { metering: MeteringContext; reservations: string[] } {
  const reservations: string[] = [];
  const gate = metering.credits;
  if (!gate) return { metering, reservations };
  return {
    reservations,
    metering: {
      ...metering,
      credits: {
        ...gate,
        async reserve(request) {
          const reservation = await gate.reserve(request);
          reservations.push(reservation.id);
          return reservation;
        },
      },
    },
  };
}

/** What the settled reservations charged, or null when the turn made none (its own connection). */
async function chargedFor(ctx: AppContext, reservations: readonly string[]): Promise<number | null> {
  if (reservations.length === 0) return null;
  const { rows } = await ctx.db.primary.query<{ charged: string | null }>('select coalesce(sum(charged), 0)::text as charged from credit_reservations where id = any($1)', [reservations]);
  return Number(rows[0]?.charged ?? 0);
}

/**
 * One turn: the history fitted to the budget (cooperative final trimming), the prompt assembled
 * by the engine, the reply streamed from the account's provider (private connection or official
 * key, with credits and usage records), then the engine's runTurn on the full reply.
 */
export async function generateTurn(ctx: AppContext, input: TurnInput): Promise<TurnOutput> {
  const started = Date.now();
  const { world } = input;
  const settings = world.settings;
  const counter = sharedTokenCounter();
  const watched = watchedCredits(input.metering ?? (await meteringFor(ctx, input.accountId, input.choicesOfWorld)));
  const metering = watched.metering;
  const model = metering.selection.defaultModel ?? ctx.config.ai.official?.defaultModel ?? 'default';
  const budget = Math.max(1, settings.maxContext - settings.maxTokens);
  // Story summaries when a summary model is configured (one-step fallback model included);
  // otherwise the cooperative final trimming: pinned and newest kept, oldest dropped first.
  const summaryModel = ctx.config.ai.summaryModel;
  const condensed = await condenseHistory(counter, input.history, {
    budget,
    model,
    summarization: summaryModel
      ? {
          ctx: metering,
          settings: { model: summaryModel, fallbackModel: ctx.config.ai.summaryFallbackModel ?? null, maxOutputTokens: 800, attempts: 3 },
          previousSummary: input.summary ?? null,
        }
      : null,
    signal: input.signal,
  });
  const persona = input.persona !== undefined ? input.persona : await enginePersona(ctx.db.primary, input.accountId);
  const now = new Date();
  const common = {
    now,
    seed: input.seed,
    sessionId: input.sessionId,
    persona,
    accountName: input.accountName,
    model,
    ...(input.party ? { party: input.party } : {}),
  };
  const history: HistoryMessage[] = [...condensed.kept, { role: 'user', content: input.userMessage }];
  const summary = condensed.summary?.summary ?? input.summary ?? null;
  const prompt = assemblePrompt(world, input.state, {
    ...common,
    history,
    summary,
    memory: input.memory ?? null,
    countTokens: (text) => counter.countText(text, model),
    budgetTokens: budget,
  });
  // The stable head's end and the latest message carry prompt-cache breakpoints (issue 47).
  const messages: ChatMessage[] = toCacheMarkedMessages(prompt.messages);
  if (input.prefix) messages.push({ role: 'assistant', content: input.prefix });
  let reply = input.prefix ?? '';
  let tokensOut = 0;
  let tokensIn = 0;
  let cachedTokens: number | null = null;
  let cacheWriteTokens: number | null = null;
  let truncated = false;
  input.onPromptReady?.();
  for await (const event of meteredStream(
    metering,
    {
      model,
      messages,
      maxTokens: settings.maxTokens,
      ...samplingRequest(settings),
    },
    { purpose: 'chat', signal: input.signal, maxReplyBytes: ctx.config.ai.replyMaxBytes },
  )) {
    if (event.type === 'delta') {
      reply += event.text;
      input.onDelta(event.text);
    } else if (event.type === 'reasoning') {
      input.onReasoning?.(event.text);
    } else {
      tokensOut = event.result.usage?.tokensOut ?? 0;
      tokensIn = event.result.usage?.tokensIn ?? 0;
      cachedTokens = event.result.usage?.cachedTokensIn ?? null;
      cacheWriteTokens = event.result.usage?.cacheWriteTokensIn ?? null;
      truncated = event.result.truncated === true;
    }
  }
  reply = cleanProviderText(reply);
  const result = runTurn(world, input.state, { ...common, userMessage: input.userMessage, aiReply: reply, skippedEntries: prompt.skippedEntries });
  const creditsCharged = await chargedFor(ctx, watched.reservations);
  const tokenCount = tokensOut || counter.countText(reply, model);
  const promptTokens = tokensIn || prompt.tokenCount;
  // the player's own key: what the reply would have cost on the platform, when the platform prices this model
  const price = creditsCharged === null ? platformPrice(ctx, model) : null;
  const creditsEstimate = price?.listed
    ? creditsForUsage(price.price, { tokensIn: promptTokens, tokensOut: tokenCount, cachedTokensIn: cachedTokens ?? 0, cacheWriteTokensIn: cacheWriteTokens ?? 0 })
    : null;
  return {
    summary: condensed.summary?.summary ?? null,
    compactedCount: condensed.summary ? condensed.dropped.length : 0,
    rawReply: reply,
    result,
    model,
    tokenCount,
    generationTimeMs: Date.now() - started,
    truncated,
    promptTokens,
    creditsCharged,
    cachedTokens,
    cacheWriteTokens,
    creditsEstimate,
    sentPrompt: sentPromptOf(prompt, model, now, input.prefix),
  };
}
