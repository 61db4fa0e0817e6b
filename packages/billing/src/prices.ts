/**
 * The platform's price of a model, in credits per million tokens, for each kind of token a reply
 * uses: prompt tokens sent fresh (`input`), prompt tokens the provider read from its prompt cache
 * (`cacheRead`), prompt tokens it wrote to that cache (`cacheWrite`) and reply tokens (`output`).
 * The operator sets a table (AI_PRICES, docs/OPERATIONS.md); a model it does not name pays the
 * table's `*` entry, or DEFAULT_PRICE: one credit per 1,000 tokens, a cache read a tenth of that.
 */
export interface ModelPrice {
  input: number;
  cacheRead: number;
  cacheWrite: number;
  output: number;
}

/** Model id → price; `*` prices every model the table does not name. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

export const DEFAULT_PRICE: ModelPrice = Object.freeze({ input: 1000, cacheRead: 100, cacheWrite: 1000, output: 1000 });

/** One credit buys this many tokens at DEFAULT_PRICE (prompt + completion). */
export const TOKENS_PER_CREDIT = 1000;

/** The price of a model and whether the table names it (or its `*`): a player's own connection shows an estimate only then. */
export function priceOf(table: PriceTable | undefined, model: string): { price: ModelPrice; listed: boolean } {
  const own = table && Object.hasOwn(table, model) ? table[model] : undefined;
  if (own) return { price: own, listed: true };
  const any = table && Object.hasOwn(table, '*') ? table['*'] : undefined;
  if (any) return { price: any, listed: true };
  return { price: DEFAULT_PRICE, listed: false };
}

/** What one call used; `cachedTokensIn` and `cacheWriteTokensIn` are parts of `tokensIn`. */
export interface PricedUsage {
  tokensIn: number;
  tokensOut: number;
  cachedTokensIn?: number;
  cacheWriteTokensIn?: number;
}

/** Whole credits, at least 1; `millionths` is credits × 10⁶ (tokens × price per million). */
const wholeCredits = (millionths: number) => Math.max(1, Math.ceil(millionths / 1_000_000 - 1e-9));

/** The prompt's split: fresh, read from the cache, written to it (clamped so that the parts never exceed the whole). */
export function promptParts(usage: PricedUsage): { fresh: number; cached: number; written: number } {
  const total = Math.max(0, usage.tokensIn);
  const cached = Math.min(total, Math.max(0, usage.cachedTokensIn ?? 0));
  const written = Math.min(total - cached, Math.max(0, usage.cacheWriteTokensIn ?? 0));
  return { fresh: total - cached - written, cached, written };
}

/** The credits one call costs at `price`. */
export function creditsForUsage(price: ModelPrice, usage: PricedUsage): number {
  const p = promptParts(usage);
  return wholeCredits(p.fresh * price.input + p.cached * price.cacheRead + p.written * price.cacheWrite + Math.max(0, usage.tokensOut) * price.output);
}

/** The most a call can cost before its usage is known: every prompt token at its dearest price, every output token the cap allows. */
export function maxCreditsFor(price: ModelPrice, tokensIn: number, maxTokensOut: number): number {
  return wholeCredits(Math.max(0, tokensIn) * Math.max(price.input, price.cacheRead, price.cacheWrite) + Math.max(0, maxTokensOut) * price.output);
}

/** Tokens at DEFAULT_PRICE for a number of credits (credits × TOKENS_PER_CREDIT). */
export const creditsFor = (tokens: number) => creditsForUsage(DEFAULT_PRICE, { tokensIn: tokens, tokensOut: 0 });
