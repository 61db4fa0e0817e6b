import { Cl100kEncoder, utf8Length } from './cl100k.ts';
import { runStepsCooperatively } from './cooperative.ts';
import { CJK_ESTIMATES, containsCjk, separateCjk, type TokenizerFamily, tokenizerFamily } from './family.ts';
import { CountLru } from './lru.ts';

/** A conversation row as far as counting is concerned. */
export interface CountableMessage {
  role: string;
  content: string;
  /** Pinned messages survive trimming. */
  pinned?: boolean;
  /** Per-row metrics; part of the row cache's validity key (compared by value). */
  metrics?: unknown;
  /** Only the number of attachments matters for counting. */
  attachments?: readonly unknown[] | null;
}

/** Chat framing per message (start, role separator, end), as in OpenAI's cl100k chat format. */
export const MESSAGE_OVERHEAD_TOKENS = 3;
/** Tokens that prime the assistant's reply after the last message. */
export const REPLY_PRIMING_TOKENS = 3;
/** Budget reserved per attachment (an image at low detail is 85 tokens on OpenAI models). */
export const ATTACHMENT_TOKENS = 85;

interface RowEntry {
  content: string;
  model: string;
  role: string;
  metricsKey: string;
  attachmentCount: number;
  tokens: number;
}

export interface CounterStats {
  rowHits: number;
  rowMisses: number;
  lruHits: number;
  /** Texts counted by the tokenizer (LRU misses). */
  tokenized: number;
  /** Counts made by the startup heuristic (never cached). */
  heuristic: number;
}

export interface TokenCounterOptions {
  /** Loads the encoder; defaults to js-tiktoken's cl100k data. */
  load?: () => Promise<Cl100kEncoder>;
  lru?: CountLru;
}

/** Loads js-tiktoken's cl100k data and builds the encoder in 8 ms slices, so startup does not stall the event loop. */
export async function loadCl100k(): Promise<Cl100kEncoder> {
  const { default: data } = await import('js-tiktoken/ranks/cl100k_base');
  return runStepsCooperatively(Cl100kEncoder.buildSteps(data));
}

function metricsKey(metrics: unknown): string {
  if (metrics === undefined || metrics === null) return '';
  try {
    return JSON.stringify(metrics) ?? '';
  } catch {
    return String(metrics);
  }
}

/** Rough count used only until the tokenizer has loaded: ASCII ≈ 4 chars a token, anything else 1 a char. */
export function heuristicCount(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) < 0x80) ascii++;
    else other++;
  }
  return Math.ceil(ascii / 4) + other;
}

/**
 * Counts texts and conversation rows. Until {@link init} has finished, counts are heuristic and
 * are kept in neither cache, so nothing estimated at startup outlives the tokenizer's arrival.
 */
export class TokenCounter {
  readonly lru: CountLru;
  readonly stats: CounterStats = { rowHits: 0, rowMisses: 0, lruHits: 0, tokenized: 0, heuristic: 0 };
  private encoder: Cl100kEncoder | null = null;
  private loading: Promise<void> | null = null;
  private rows = new WeakMap<object, RowEntry>();
  private readonly load: () => Promise<Cl100kEncoder>;

  constructor(options: TokenCounterOptions = {}) {
    this.load = options.load ?? loadCl100k;
    this.lru = options.lru ?? new CountLru();
  }

  /** True once the tokenizer is loaded and counts are exact. */
  get ready(): boolean {
    return this.encoder !== null;
  }

  /** Loads the tokenizer (once; concurrent callers share the load). */
  init(): Promise<void> {
    this.loading ??= this.load().then(
      (encoder) => {
        this.encoder = encoder;
        // Belt and braces: nothing heuristic is cached, but a fresh row cache makes that structural.
        this.rows = new WeakMap();
      },
      (err: unknown) => {
        this.loading = null;
        throw err;
      },
    );
    return this.loading;
  }

  /** The loaded encoder (throws before {@link init} has finished). */
  get cl100k(): Cl100kEncoder {
    if (!this.encoder) throw new Error('tokenizer not initialized');
    return this.encoder;
  }

  /** Token count of text for a model (cl100k by default; CJK estimates for the families in the table). */
  countText(text: string, model?: string | null): number {
    const family = tokenizerFamily(model);
    const encoder = this.encoder;
    if (!encoder) {
      this.stats.heuristic++;
      return heuristicCount(text);
    }
    if (text.length === 0) return 0;
    const key = family === 'cl100k' ? text : `${family}\u0000${text}`;
    const cached = this.lru.get(key);
    if (cached !== undefined) {
      this.stats.lruHits++;
      return cached;
    }
    this.stats.tokenized++;
    const tokens = countWith(encoder, family, text);
    this.lru.set(key, tokens);
    return tokens;
  }

  /** Tokens one message adds to a prompt (framing, role, content, attachments), cached per row object. */
  countMessage(message: CountableMessage, model?: string | null): number {
    const modelKey = model ?? '';
    const attachmentCount = message.attachments?.length ?? 0;
    const mKey = metricsKey(message.metrics);
    const row = this.rows.get(message);
    if (
      row &&
      row.content === message.content &&
      row.model === modelKey &&
      row.role === message.role &&
      row.metricsKey === mKey &&
      row.attachmentCount === attachmentCount
    ) {
      this.stats.rowHits++;
      return row.tokens;
    }
    this.stats.rowMisses++;
    const exact = this.ready;
    const tokens =
      MESSAGE_OVERHEAD_TOKENS + this.countText(message.role, model) + this.countText(message.content, model) + attachmentCount * ATTACHMENT_TOKENS;
    if (exact) {
      this.rows.set(message, { content: message.content, model: modelKey, role: message.role, metricsKey: mKey, attachmentCount, tokens });
    } else {
      this.rows.delete(message);
    }
    return tokens;
  }
}

function countWith(encoder: Cl100kEncoder, family: TokenizerFamily, text: string): number {
  if (family === 'cl100k' || !containsCjk(text)) return encoder.count(text);
  const { cjkChars, rest } = separateCjk(text);
  return encoder.count(rest) + Math.ceil(cjkChars * CJK_ESTIMATES[family].tokensPerCjkChar);
}

/** UTF-8 byte length, the unit of the oversized-piece bound. */
export { utf8Length };

let shared: TokenCounter | null = null;

/** The process-wide counter (one LRU, one tokenizer). Call `init()` at startup. */
export function sharedTokenCounter(): TokenCounter {
  shared ??= new TokenCounter();
  return shared;
}
