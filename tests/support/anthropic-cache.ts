import { createHash } from 'node:crypto';

/**
 * Anthropic's published prompt-cache rules, as the loopback Anthropic fake (./fake-anthropic.ts)
 * applies them to each request (issue 47 point 3):
 *  - the prompt is read in order (`system` blocks, then each message's content blocks; a string
 *    content is one text block) and a block with `cache_control` is a breakpoint;
 *  - at most 4 breakpoints in a request (more: 400 invalid_request_error, checked by the fake);
 *  - a read: the longest prefix that ends at a breakpoint, or at one of the 20 block boundaries
 *    before a breakpoint, and that an earlier request wrote (same model, byte for byte, block
 *    boundaries included) and that has not expired; its tokens are `cache_read_input_tokens`;
 *  - a write: the prefix at each breakpoint after what was read, when it has at least the minimum
 *    cacheable length (1024 tokens for Sonnet- and Opus-class models, 2048 for Haiku; shorter is
 *    not cached, without error); the tokens from the read's end to the last written breakpoint are
 *    `cache_creation_input_tokens`;
 *  - an entry lives 5 minutes from its last write or read (a read refreshes it);
 *  - `input_tokens` is the rest: the prompt's tokens neither read nor written.
 * Tokens are approximated the same way everywhere: a text's UTF-8 bytes / 4, rounded up.
 */

export const CACHE_TTL_MS = 5 * 60_000;
export const MAX_CACHE_BREAKPOINTS = 4;
/** How many block boundaries before a breakpoint the API looks for an earlier write. */
export const CACHE_LOOKBACK_BLOCKS = 20;

export const approxTokens = (text: string) => Math.ceil(Buffer.byteLength(text, 'utf8') / 4);

/** The minimum cacheable prefix of a model: 2048 tokens for Haiku, 1024 for Sonnet and Opus (and others). */
export const minCacheableTokens = (model: string) => (/haiku/i.test(model) ? 2048 : 1024);

export interface CacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

interface PromptBlock {
  /** Hash of the prompt up to and including this block. */
  prefix: string;
  /** Tokens of the prompt up to and including this block. */
  tokens: number;
  breakpoint: boolean;
}

type RawBlock = { type?: unknown; text?: unknown; cache_control?: unknown };

/** The request's blocks in prompt order, each with the hash and token count of the prefix it ends. */
export function promptBlocks(body: Record<string, unknown>): PromptBlock[] {
  const out: PromptBlock[] = [];
  let hash = createHash('sha256').update(`model\0${String(body.model)}`).digest('hex');
  let tokens = 0;
  const add = (where: string, block: RawBlock) => {
    const text = typeof block.text === 'string' ? block.text : '';
    hash = createHash('sha256').update(`${hash}\0${where}\0${text}`).digest('hex');
    tokens += approxTokens(text);
    out.push({ prefix: hash, tokens, breakpoint: block.cache_control !== undefined && block.cache_control !== null });
  };
  const system = body.system;
  if (typeof system === 'string') add('system:0', { text: system });
  else if (Array.isArray(system)) system.forEach((block: RawBlock, i) => add(`system:${i}`, block));
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{ role?: unknown; content?: unknown }>) : [];
  messages.forEach((message, m) => {
    const blocks: RawBlock[] = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : Array.isArray(message.content) ? (message.content as RawBlock[]) : [];
    blocks.forEach((block, b) => add(`${String(message.role)}:${m}:${b}`, block));
  });
  return out;
}

/** How many `cache_control` breakpoints a request carries. */
export const breakpointCount = (body: Record<string, unknown>) => promptBlocks(body).filter((block) => block.breakpoint).length;

/** One organisation's prompt cache, on a clock the caller may move (`now`). */
export class AnthropicPromptCache {
  private readonly entries = new Map<string, number>();
  constructor(private readonly now: () => number = Date.now) {}

  /** Applies the rules to one request: what it read and wrote, and the usage the API reports. */
  use(body: Record<string, unknown>): CacheUsage {
    const blocks = promptBlocks(body);
    const total = blocks.at(-1)?.tokens ?? 0;
    const now = this.now();
    const live = (prefix: string) => {
      const expires = this.entries.get(prefix);
      return expires !== undefined && expires > now;
    };
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []));
    let readEnd = -1;
    for (const at of breakpoints) {
      for (let index = at; index >= Math.max(0, at - CACHE_LOOKBACK_BLOCKS); index--) {
        if (live(blocks[index]!.prefix)) {
          readEnd = Math.max(readEnd, index);
          break;
        }
      }
    }
    const read = readEnd >= 0 ? blocks[readEnd]!.tokens : 0;
    if (readEnd >= 0) this.entries.set(blocks[readEnd]!.prefix, now + CACHE_TTL_MS);
    const minimum = minCacheableTokens(String(body.model));
    let writeEnd = -1;
    for (const at of breakpoints) {
      if (at <= readEnd) {
        if (live(blocks[at]!.prefix)) this.entries.set(blocks[at]!.prefix, now + CACHE_TTL_MS);
        continue;
      }
      if (blocks[at]!.tokens < minimum) continue;
      this.entries.set(blocks[at]!.prefix, now + CACHE_TTL_MS);
      writeEnd = at;
    }
    const write = writeEnd >= 0 ? blocks[writeEnd]!.tokens - read : 0;
    return { input_tokens: total - read - write, cache_creation_input_tokens: write, cache_read_input_tokens: read };
  }
}
