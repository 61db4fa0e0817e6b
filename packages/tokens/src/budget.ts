import { type CooperativeOptions, type CooperativeStats, runSteps, runStepsCooperatively } from './cooperative.ts';
import { type CountableMessage, REPLY_PRIMING_TOKENS, type TokenCounter } from './counter.ts';

export interface HistoryCountOptions {
  model?: string | null;
  /** Stop as soon as the running total exceeds this many tokens. */
  budget?: number;
}

export interface HistoryCount {
  /** Sum of the counted messages plus reply priming; exact when `exceeded` is false. */
  total: number;
  /** Per-message counts of the messages counted so far (all of them unless `exceeded`). */
  counts: number[];
  /** True when counting stopped because `total` went over the budget. */
  exceeded: boolean;
}

function* countSteps(counter: TokenCounter, messages: readonly CountableMessage[], options: HistoryCountOptions): Generator<void, HistoryCount, void> {
  const counts: number[] = [];
  let total = REPLY_PRIMING_TOKENS;
  const budget = options.budget ?? Number.POSITIVE_INFINITY;
  for (let i = 0; i < messages.length; i++) {
    if (i > 0) yield;
    const tokens = counter.countMessage(messages[i]!, options.model);
    counts.push(tokens);
    total += tokens;
    if (total > budget) return { total, counts, exceeded: true };
  }
  return { total, counts, exceeded: false };
}

/** Counts a message list in one go (blocks the event loop for the whole list). */
export function countHistory(counter: TokenCounter, messages: readonly CountableMessage[], options: HistoryCountOptions = {}): HistoryCount {
  return runSteps(countSteps(counter, messages, options));
}

/**
 * Counts a message list cooperatively: between messages, once an 8 ms slice is used up, it yields
 * to timers and sockets. A single huge message is not interrupted (the slice is not a deadline).
 */
export async function countHistoryCooperatively(
  counter: TokenCounter,
  messages: readonly CountableMessage[],
  options: HistoryCountOptions & CooperativeOptions = {},
  stats?: CooperativeStats,
): Promise<HistoryCount> {
  await counter.init();
  return runStepsCooperatively(countSteps(counter, messages, options), options, stats);
}

export interface TrimOptions {
  model?: string | null;
  /** Prompt budget in tokens for the whole history (including reply priming). */
  budget: number;
}

export interface TrimDecision {
  /** Indices of the messages sent, in conversation order. */
  kept: number[];
  /** Indices of the messages dropped (the oldest unpinned ones), in conversation order. */
  dropped: number[];
  /** Tokens of the kept messages plus reply priming. */
  total: number;
  /** True when the pinned messages and the newest one alone exceed the budget (nothing more can go). */
  overBudget: boolean;
}

/**
 * The trimming rule: pinned messages and the newest message always stay; of the others, the
 * oldest go first until the rest fits. Because every count is positive, "drop oldest until it
 * fits" keeps exactly the longest run of newest unpinned messages that fits, so the walk goes
 * newest → oldest and stops counting at the first one that does not fit (older ones are dropped
 * without being counted).
 */
function* trimSteps(counter: TokenCounter, messages: readonly CountableMessage[], options: TrimOptions): Generator<void, TrimDecision, void> {
  const n = messages.length;
  if (n === 0) return { kept: [], dropped: [], total: REPLY_PRIMING_TOKENS, overBudget: REPLY_PRIMING_TOKENS > options.budget };
  const newest = n - 1;
  const keep = new Uint8Array(n);
  let total = REPLY_PRIMING_TOKENS;
  let first = true;
  for (let i = 0; i < n; i++) {
    if (i !== newest && !messages[i]!.pinned) continue;
    if (!first) yield;
    first = false;
    total += counter.countMessage(messages[i]!, options.model);
    keep[i] = 1;
  }
  for (let i = newest - 1; i >= 0; i--) {
    if (messages[i]!.pinned) continue;
    yield;
    const tokens = counter.countMessage(messages[i]!, options.model);
    if (total + tokens > options.budget) break;
    total += tokens;
    keep[i] = 1;
  }
  const kept: number[] = [];
  const dropped: number[] = [];
  for (let i = 0; i < n; i++) (keep[i] ? kept : dropped).push(i);
  return { kept, dropped, total, overBudget: total > options.budget };
}

/** Final history trimming, synchronously. */
export function trimHistory(counter: TokenCounter, messages: readonly CountableMessage[], options: TrimOptions): TrimDecision {
  return runSteps(trimSteps(counter, messages, options));
}

/** Final history trimming, cooperatively (send, regenerate and continue use this one); same decisions as {@link trimHistory}. */
export async function trimHistoryCooperatively(
  counter: TokenCounter,
  messages: readonly CountableMessage[],
  options: TrimOptions & CooperativeOptions,
  stats?: CooperativeStats,
): Promise<TrimDecision> {
  await counter.init();
  return runStepsCooperatively(trimSteps(counter, messages, options), options, stats);
}
