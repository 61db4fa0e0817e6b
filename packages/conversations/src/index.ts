export { type CachedHistory, HistoryCache } from './history-cache.ts';
export {
  type CompletedReply,
  completeTurn,
  type CompleteTurnInput,
  releaseTurn,
  settleAbandonedReplies,
  settleStreamingReplies,
  startTurn,
  type StartTurnInput,
  type StartTurnResult,
  type TurnAccountRows,
  type TurnHistoryMessage,
  TURN_LOCK_TTL_SECONDS,
  type TurnLogin,
  type TurnSessionRow,
  type WorldStamp,
} from './turn.ts';
