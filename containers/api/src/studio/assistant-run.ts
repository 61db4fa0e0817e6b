import { type ChatMessage, meteredComplete, type MeteringContext, type ToolCall } from '@yumina/ai';
import { creditsFor } from '@yumina/billing';
import { CompileError, compileRootComponent, type RootComponentLike } from '@yumina/sandbox/compile';
import { type AssistantOperation, applyOperation, assistantSystemPrompt, assistantTools, issuesOf, type OperationChange, operationOfCall } from '@yumina/world/assistant';

/**
 * One round of the studio assistant (docs/STUDIO-ASSISTANT.md): the tool loop between the model and
 * a copy of one world held in memory. The model's tool calls are parsed, validated with the world
 * schema and (interface files) compiled one by one; each accepted one changes the copy and joins
 * the card, each refused one goes back to the model as the tool's error and is never offered.
 * Nothing here writes a database row, publishes, or reaches anything but the provider.
 */

type Obj = Record<string, unknown>;

/** Provider calls of one round at most (each a metered step). */
export const ASSISTANT_MAX_STEPS = 8;
/** Output cap of one step. */
export const ASSISTANT_MAX_TOKENS = 8192;

export interface ToolOutcome {
  name: string;
  ok: boolean;
  /** The change's line (accepted) or the refusal (sent back to the model). */
  detail: string;
}

export interface StepReport {
  index: number;
  tokensIn: number;
  tokensOut: number;
  estimated: boolean;
  /** Platform credits this step cost (0 on the author's own connection). */
  credits: number;
  source: 'official' | 'private';
  tools: ToolOutcome[];
}

export interface RoundOutcome {
  reply: string;
  operations: AssistantOperation[];
  changes: OperationChange[];
  steps: StepReport[];
  /** The world after the card's operations (checked valid). */
  world: Obj;
}

/** The interface's build check: the studio's own compiler (@yumina/sandbox/compile), run on the server. */
export function buildError(world: Obj): string | null {
  const root = world.rootComponent as RootComponentLike | null | undefined;
  if (!root) return null;
  try {
    compileRootComponent(root);
    return null;
  } catch (err) {
    if (err instanceof CompileError) return err.message;
    return err instanceof Error ? err.message : String(err);
  }
}

/** Answers one tool call against the working copy: the new copy and what to tell the model. */
export function answerToolCall(world: Obj, call: ToolCall): { world: Obj; outcome: ToolOutcome; operation?: AssistantOperation; change?: OperationChange } {
  const parsed = operationOfCall(call.name, call.arguments);
  if (!parsed.ok) return { world, outcome: { name: call.name, ok: false, detail: parsed.error } };
  const applied = applyOperation(world, parsed.value);
  if (!applied.ok) return { world, outcome: { name: call.name, ok: false, detail: applied.error } };
  if (applied.touchesInterface) {
    const error = buildError(applied.world);
    if (error) return { world, outcome: { name: call.name, ok: false, detail: `The interface does not build, so this file was not applied: ${error}` } };
  }
  return { world: applied.world, operation: applied.operation!, change: applied.change, outcome: { name: call.name, ok: true, detail: applied.change.summary } };
}

export interface RunInput {
  metering: MeteringContext;
  model: string;
  world: Obj;
  /** Earlier rounds as messages, then this round's user message last. */
  history: ChatMessage[];
  signal: AbortSignal;
  replyMaxBytes?: number;
  onStep(step: StepReport): void;
}

export async function runRound(input: RunInput): Promise<RoundOutcome> {
  let world = input.world;
  const tools = assistantTools();
  const messages: ChatMessage[] = [{ role: 'system', content: assistantSystemPrompt({ world }) }, ...input.history];
  const operations: AssistantOperation[] = [];
  const changes: OperationChange[] = [];
  const steps: StepReport[] = [];
  let reply = '';
  for (let index = 0; index < ASSISTANT_MAX_STEPS; index++) {
    const last = index === ASSISTANT_MAX_STEPS - 1;
    const result = await meteredComplete(
      input.metering,
      { model: input.model, messages, tools, toolChoice: last ? 'none' : 'auto', maxTokens: ASSISTANT_MAX_TOKENS },
      { purpose: 'studio-assistant', signal: input.signal, maxReplyBytes: input.replyMaxBytes },
    );
    const source = input.metering.selection.source;
    const step: StepReport = {
      index,
      tokensIn: result.usage.tokensIn,
      tokensOut: result.usage.tokensOut,
      estimated: result.estimated,
      credits: source === 'official' ? creditsFor(result.usage.tokensIn + result.usage.tokensOut) : 0,
      source,
      tools: [],
    };
    reply = result.content.trim() || reply;
    const calls = result.toolCalls ?? [];
    if (calls.length === 0 || last) {
      steps.push(step);
      input.onStep(step);
      break;
    }
    messages.push({ role: 'assistant', content: result.content, toolCalls: calls });
    for (const call of calls) {
      const answer = answerToolCall(world, call);
      world = answer.world;
      if (answer.operation) operations.push(answer.operation);
      if (answer.change) changes.push(answer.change);
      step.tools.push(answer.outcome);
      messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: answer.outcome.ok ? `Added to the proposed card: ${answer.outcome.detail}` : `Refused (nothing changed): ${answer.outcome.detail}` });
    }
    steps.push(step);
    input.onStep(step);
  }
  // every operation was checked one by one; the whole is checked once more before it is offered
  const issues = issuesOf(world);
  const build = buildError(world);
  if (issues.length > 0 || build) throw new Error(`assistant card failed its final check: ${build ?? issues[0]!.message}`);
  return { reply: reply || (operations.length ? 'Here is the proposed change.' : 'I have nothing to change.'), operations, changes, steps, world };
}
