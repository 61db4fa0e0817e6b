export { type CachedHistory, HistoryCache } from './history-cache.ts';
export {
  type CompletedReply,
  completeTurn,
  type CompleteTurnInput,
  settleStreamingReplies,
  startTurn,
  type StartTurnInput,
  type StartTurnResult,
  type TurnAccountRows,
  type TurnHistoryMessage,
  type TurnSessionRow,
  type WorldStamp,
} from './turn.ts';
