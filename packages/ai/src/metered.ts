import { MESSAGE_OVERHEAD_TOKENS, REPLY_PRIMING_TOKENS, sharedTokenCounter, type TokenCounter } from '@yumina/tokens';
import { type CallOptions, type ChatRequest, type ChatResult, type ChatStreamEvent, completeChat, streamChat, type Usage } from './chat.ts';
import { AiNoProviderError } from './errors.ts';
import type { BillingSource, ProviderSelection } from './provider.ts';

/**
 * Calls with billing and usage records around them.
 *
 * Official key: `credits.reserve` runs before anything is sent (it throws, for example a 402, to
 * refuse, and then no request leaves the process); after the call `credits.settle` gets the actual
 * usage, or null when the call failed and nothing is owed. Private connection: credits are never
 * touched. Every successful call, on either source, produces exactly one `recordUsage` call.
 */

export type CallPurpose = 'chat' | 'summary' | (string & {});

export interface UsageRecord {
  accountId: string;
  /** The effective model: the one that produced the answer (the fallback model after a fallback). */
  model: string;
  /** The model first asked for in this logical call (differs from `model` after a fallback). */
  requestedModel: string;
  /** The model the provider reported (routers name the routed model). */
  providerModel: string | null;
  tokensIn: number;
  tokensOut: number;
  /** Of `tokensIn`: read from the provider's prompt cache, and written to it (absent when not reported). */
  cachedTokensIn?: number;
  cacheWriteTokensIn?: number;
  /** True when the provider reported no usage and the figures were counted locally. */
  estimated: boolean;
  /** True when the call ended early (aborted mid-stream) and only the part received is recorded. */
  partial: boolean;
  billingSource: BillingSource;
  purpose: CallPurpose;
  /** The credit reservation settled for this call (official calls only). */
  reservationId: string | null;
}

/** Writes the one usage/ledger row of a successful call. */
export type UsageRecorder = (record: UsageRecord) => Promise<void>;

export interface CreditReservation {
  id: string;
}

export interface CreditReserveRequest {
  accountId: string;
  model: string;
  purpose: CallPurpose;
  /** Prompt tokens as counted here (the provider's figure arrives at settle time). */
  estimatedTokensIn: number;
  /** The output cap of the request; what the reservation must cover at most. */
  maxTokensOut: number;
}

export interface SettledUsage {
  model: string;
  tokensIn: number;
  tokensOut: number;
  /** Of `tokensIn`: read from the provider's prompt cache, and written to it (priced apart). */
  cachedTokensIn?: number;
  cacheWriteTokensIn?: number;
  estimated: boolean;
}

/** Reserve-then-settle billing for calls on the platform's official key. */
export interface CreditGate {
  /** Before any provider request. Throws to refuse (insufficient credits → 402): nothing is sent. */
  reserve(request: CreditReserveRequest): Promise<CreditReservation>;
  /**
   * After the call: the actual usage with its usage record, or null when the call failed (release
   * the reservation). The charge and the usage record commit together (one transaction), so a
   * credit is never taken without its usage row; a settle that never ran is completed once by
   * maintenance.
   */
  settle(reservation: CreditReservation, usage: SettledUsage | null, record: UsageRecord | null): Promise<void>;
}

export interface MeteringContext {
  accountId: string;
  selection: ProviderSelection;
  recordUsage: UsageRecorder;
  /** Required when `selection.source` is `official`. */
  credits?: CreditGate;
  /** For estimates when the provider reports no usage (defaults to the shared counter). */
  counter?: TokenCounter;
  /** The first-byte and idle deadlines of every call in this context (a call's own options win). */
  deadlines?: Pick<CallOptions, 'firstByteTimeoutMs' | 'idleTimeoutMs'>;
}

export interface MeteredCallOptions extends CallOptions {
  purpose: CallPurpose;
  /** The model first asked for, when this call is a fallback (recorded as `requestedModel`). */
  requestedModel?: string;
  /** Output cap to reserve for when the request has none. */
  defaultMaxTokensOut?: number;
  /** Turns a 200 into a failure (for example a refusal): the call is then released, not recorded. */
  reject?: (result: ChatResult) => Error | undefined;
}

export interface MeteredResult extends ChatResult {
  usage: Usage;
  estimated: boolean;
}

function promptTokens(counter: TokenCounter, request: ChatRequest): number {
  let total = REPLY_PRIMING_TOKENS;
  for (const m of request.messages) total += MESSAGE_OVERHEAD_TOKENS + counter.countText(m.role, request.model) + counter.countText(m.content, request.model);
  return total;
}

/** The cache figures a provider reported, only those it reported. */
const cacheFigures = (usage: Usage): Pick<Usage, 'cachedTokensIn' | 'cacheWriteTokensIn'> => ({
  ...(usage.cachedTokensIn !== undefined ? { cachedTokensIn: usage.cachedTokensIn } : {}),
  ...(usage.cacheWriteTokensIn !== undefined ? { cacheWriteTokensIn: usage.cacheWriteTokensIn } : {}),
});

class Meter {
  private reservation: CreditReservation | null = null;
  /** Set once the call is released or charged: each call settles and records at most once. */
  private closed = false;
  readonly counter: TokenCounter;

  constructor(
    private readonly ctx: MeteringContext,
    private readonly request: ChatRequest,
    private readonly options: MeteredCallOptions,
  ) {
    this.counter = ctx.counter ?? sharedTokenCounter();
  }

  async reserve(): Promise<void> {
    if (this.ctx.selection.source !== 'official') return;
    if (!this.ctx.credits) throw new AiNoProviderError('Platform calls need a credit gate (configuration error).');
    this.reservation = await this.ctx.credits.reserve({
      accountId: this.ctx.accountId,
      model: this.request.model,
      purpose: this.options.purpose,
      estimatedTokensIn: promptTokens(this.counter, this.request),
      maxTokensOut: this.request.maxTokens ?? this.options.defaultMaxTokensOut ?? 4096,
    });
  }

  /** The call failed and nothing is owed. The original error is what the caller sees. */
  async release(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.reservation) await this.ctx.credits!.settle(this.reservation, null, null);
  }

  /** Settles the reservation and writes the one usage record. */
  async charge(result: ChatResult, partial: boolean): Promise<{ usage: Usage; estimated: boolean }> {
    if (this.closed) throw new Error('AI call already settled');
    this.closed = true;
    const estimated = result.usage === null;
    const usage = result.usage ?? { tokensIn: promptTokens(this.counter, this.request), tokensOut: this.counter.countText(result.content + (result.refusal ?? ''), this.request.model) };
    const record: UsageRecord = {
      accountId: this.ctx.accountId,
      model: this.request.model,
      requestedModel: this.options.requestedModel ?? this.request.model,
      providerModel: result.providerModel,
      tokensIn: usage.tokensIn,
      tokensOut: usage.tokensOut,
      ...cacheFigures(usage),
      estimated,
      partial,
      billingSource: this.ctx.selection.source,
      purpose: this.options.purpose,
      reservationId: this.reservation?.id ?? null,
    };
    if (this.reservation) {
      await this.ctx.credits!.settle(this.reservation, { model: this.request.model, tokensIn: usage.tokensIn, tokensOut: usage.tokensOut, ...cacheFigures(usage), estimated }, record);
    } else {
      await this.ctx.recordUsage(record);
    }
    return { usage, estimated };
  }

  /** The call ended early after text arrived: charge what arrived (estimated, partial). */
  async chargePartial(content: string): Promise<void> {
    if (this.closed) return;
    await this.charge({ id: null, model: this.request.model, providerModel: null, content, refusal: null, finishReason: null, usage: null }, true);
  }

  callOptions(): CallOptions {
    const { signal, timeoutMs, maxReplyBytes, firstByteTimeoutMs, idleTimeoutMs } = this.options;
    return {
      signal,
      timeoutMs,
      maxReplyBytes,
      firstByteTimeoutMs: firstByteTimeoutMs ?? this.ctx.deadlines?.firstByteTimeoutMs,
      idleTimeoutMs: idleTimeoutMs ?? this.ctx.deadlines?.idleTimeoutMs,
    };
  }
}

async function releaseThenThrow(meter: Meter, err: unknown): Promise<never> {
  try {
    await meter.release();
  } catch (releaseErr) {
    throw new AggregateError([err, releaseErr], 'AI call failed and its credit reservation could not be released');
  }
  throw err;
}

/** A non-streaming chat completion with reserve/settle (official key) and one usage record. */
export async function meteredComplete(ctx: MeteringContext, request: ChatRequest, options: MeteredCallOptions): Promise<MeteredResult> {
  const meter = new Meter(ctx, request, options);
  await meter.reserve();
  let result: ChatResult;
  try {
    result = await completeChat(ctx.selection.endpoint, request, meter.callOptions());
    const rejected = options.reject?.(result);
    if (rejected) throw rejected;
  } catch (err) {
    return releaseThenThrow(meter, err);
  }
  const { usage, estimated } = await meter.charge(result, false);
  return { ...result, usage, estimated };
}

/**
 * A streaming chat completion with the same billing rules. A stream that fails or is aborted after
 * text arrived is charged for what arrived (the provider bills generated tokens), marked partial.
 */
export async function* meteredStream(ctx: MeteringContext, request: ChatRequest, options: MeteredCallOptions): AsyncGenerator<ChatStreamEvent, void, void> {
  const meter = new Meter(ctx, request, options);
  await meter.reserve();
  let content = '';
  let done = false;
  try {
    for await (const event of streamChat(ctx.selection.endpoint, request, meter.callOptions())) {
      if (event.type !== 'done') {
        if (event.type === 'delta') content += event.text;
        yield event;
        continue;
      }
      const rejected = options.reject?.(event.result);
      if (rejected) {
        await meter.release();
        throw rejected;
      }
      const { usage } = await meter.charge(event.result, event.result.truncated === true);
      done = true;
      yield { type: 'done', result: { ...event.result, usage } };
    }
  } catch (err) {
    if (done) throw err;
    if (!content) return releaseThenThrow(meter, err);
    try {
      await meter.chargePartial(content);
    } catch (chargeErr) {
      throw new AggregateError([err, chargeErr], 'AI stream failed and its partial usage could not be recorded');
    }
    throw err;
  } finally {
    // the consumer stopped reading early (break): charge what arrived, or release (no-ops when already closed)
    if (!done) await (content ? meter.chargePartial(content) : meter.release());
  }
}
