export {
  applyOperation,
  applyOperations,
  type ApplyResult,
  ASSISTANT_OPERATION_NAMES,
  type AssistantOperation,
  type AssistantOperationName,
  assistantOperationSchema,
  assistantTools,
  INTERFACE_FILE_MAX_CHARS,
  issuesOf,
  type OperationChange,
  operationOfCall,
  SETTING_KEYS,
} from './operations.ts';
export { type DiffLine, lineDiff } from './line-diff.ts';
export { assistantSystemPrompt, compactWorld, dataText, rejectionMessage, SCHEMA_SUMMARY, WORLD_PROMPT_MAX_CHARS } from './grounding.ts';
