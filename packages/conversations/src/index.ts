export { type CachedHistory, HistoryCache } from './history-cache.ts';
export {
  type CompletedReply,
  breakTurn,
  completeTurn,
  failTurn,
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
export { ChatFormatError, chatMarkdown, chatText, MAX_IMPORTED_MESSAGE, MAX_IMPORTED_MESSAGES, type ReadChat, readSillyTavernChat, sillyTavernChat, type Transcript, type TranscriptMessage } from './sillytavern-chat.ts';
