export {
  type CallOptions,
  type ChatMessage,
  type ChatRequest,
  type ChatResult,
  type ChatStreamEvent,
  collectStream,
  cleanProviderText,
  clipUtf8,
  completeChat,
  DEFAULT_REPLY_MAX_BYTES,
  listModels,
  type ProviderEndpoint,
  requestBody,
  SPEECH_MAX_BYTES,
  streamChat,
  synthesizeSpeech,
  type Usage,
} from './chat.ts';
export {
  AiAbortedError,
  type AiDeadline,
  AiAuthError,
  AiBadRequestError,
  AiContentRefusalError,
  AiInvalidResponseError,
  AiNetworkError,
  AiNoProviderError,
  AiProviderError,
  AiRateLimitError,
  AiReasoningRequiredError,
  AiTimeoutError,
  AiUpstreamError,
  type ProviderErrorDetails,
  providerError,
} from './errors.ts';
export {
  type CallPurpose,
  type CreditGate,
  type CreditReservation,
  type CreditReserveRequest,
  type MeteredCallOptions,
  type MeteredResult,
  type MeteringContext,
  meteredComplete,
  meteredStream,
  type SettledUsage,
  type UsageRecord,
  type UsageRecorder,
} from './metered.ts';
export {
  type BillingPreference,
  type BillingSource,
  type OfficialProvider,
  type PrivateConnectionSettings,
  privateConnectionUsable,
  type ProviderSelection,
  type ProviderSelectionInput,
  selectProvider,
} from './provider.ts';
export { readServerSentEvents } from './sse.ts';
export {
  type CondensedHistory,
  type CondenseOptions,
  condenseHistory,
  refusalOf,
  type SummaryInput,
  type SummaryResult,
  type SummarySettings,
  summarize,
  summaryMessages,
} from './summary.ts';
export {
  AiUrlRefusedError,
  ERROR_BODY_MAX_BYTES,
  guardedFetch,
  isPrivateAddress,
  normalizeBaseUrl,
  type PrivateNetworkAccess,
  readBounded,
} from './outbound.ts';
export { type ProviderKind, PROVIDER_KINDS, PROVIDER_LABELS, providerKindOf } from './kinds.ts';
export { ANTHROPIC_OPENING_USER_TURN, ANTHROPIC_VERSION, anthropicBody } from './anthropic.ts';
export { geminiBody } from './gemini.ts';
