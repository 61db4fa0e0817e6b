export { type CachedHistory, HistoryCache } from './history-cache.ts';
export {
  type CompletedReply,
  breakTurn,
  completeTurn,
  type CompleteTurnInput,
  lockTurn,
  releaseTurn,
  settleAbandonedReplies,
  settleStreamingReplies,
  startTurn,
  type StartTurnInput,
  type StartTurnResult,
  type TurnAccountRows,
  type TurnHistoryMessage,
  type TurnLogin,
  type TurnSessionRow,
  type WorldStamp,
} from './turn.ts';
