export { CL100K_PATTERN_SOURCE, Cl100kEncoder, OVERSIZED_PIECE_BYTES, type RankData, utf8Length } from './cl100k.ts';
export {
  ATTACHMENT_TOKENS,
  type CounterStats,
  type CountableMessage,
  heuristicCount,
  loadCl100k,
  MESSAGE_OVERHEAD_TOKENS,
  REPLY_PRIMING_TOKENS,
  sharedTokenCounter,
  TokenCounter,
  type TokenCounterOptions,
} from './counter.ts';
export { CJK_ESTIMATES, type CjkEstimate, containsCjk, type EstimatedFamily, separateCjk, type TokenizerFamily, tokenizerFamily } from './family.ts';
export { CountLru, LRU_MAX_CHARS, LRU_MAX_ENTRIES } from './lru.ts';
export {
  COOPERATIVE_SLICE_MS,
  type CooperativeOptions,
  type CooperativeStats,
  runSteps,
  runStepsCooperatively,
  yieldToEventLoop,
} from './cooperative.ts';
export {
  countHistory,
  countHistoryCooperatively,
  type HistoryCount,
  type HistoryCountOptions,
  type TrimDecision,
  type TrimOptions,
  trimHistory,
  trimHistoryCooperatively,
} from './budget.ts';
