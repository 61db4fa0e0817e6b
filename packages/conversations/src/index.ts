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
  turnSession,
  type TurnSessionRow,
  type WorldStamp,
} from './turn.ts';
