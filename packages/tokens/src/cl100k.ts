/**
 * The cl100k_base byte-pair encoder used for counting.
 *
 * Ranks come from js-tiktoken's own data file (raw token bytes, so U+FEFF and every partial UTF-8
 * token are exact), and the pre-tokenizer is js-tiktoken's cl100k pattern. Special-token literals
 * such as `<|endoftext|>` are never recognised: all text is ordinary text, exactly like
 * `encode(text, [], [])` in js-tiktoken, so user input can never make counting throw.
 *
 * Bytes are handled as "binary strings" (one char code 0–255 per byte): an ASCII piece is its own
 * binary string, so the common case needs no conversion and rank lookups are plain Map gets.
 *
 * A pre-tokenizer piece larger than {@link OVERSIZED_PIECE_BYTES} UTF-8 bytes is not merged: its
 * byte length is returned instead. Every cl100k token covers at least one byte and every byte is a
 * token, so that is a true upper bound, and it keeps the cost linear on long unbroken input where
 * exact merging is quadratic.
 */

import { runSteps } from './cooperative.ts';
import { pieceEnd } from './pretokenizer.ts';

/** js-tiktoken's cl100k pre-tokenizer with the contraction group made non-capturing. */
export const CL100K_PATTERN_SOURCE =
  "(?:'s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** Pieces with more UTF-8 bytes than this are counted by their byte length (an upper bound). */
export const OVERSIZED_PIECE_BYTES = 256;

/** Entries kept in the encoder's internal piece-count cache (pieces are ≤ 256 bytes each). */
const PIECE_CACHE_ENTRIES = 16_384;

const NO_RANK = 0x7fffffff;

/** UTF-8 byte length of a JS string; a lone surrogate counts as U+FFFD (3 bytes), as TextEncoder does. */
export function utf8Length(s: string): number {
  let bytes = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

const byteScratch = new Uint8Array(OVERSIZED_PIECE_BYTES);

/** The UTF-8 bytes of `s` as a binary string, or null when they exceed {@link OVERSIZED_PIECE_BYTES}. */
function utf8Binary(s: string): string | null {
  let j = 0;
  const n = s.length;
  const out = byteScratch;
  const cap = OVERSIZED_PIECE_BYTES;
  for (let i = 0; i < n; i++) {
    let c = s.charCodeAt(i);
    if (c < 0x80) {
      if (j + 1 > cap) return null;
      out[j++] = c;
      continue;
    }
    if (c < 0x800) {
      if (j + 2 > cap) return null;
      out[j++] = 0xc0 | (c >> 6);
      out[j++] = 0x80 | (c & 0x3f);
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        if (j + 4 > cap) return null;
        const cp = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
        out[j++] = 0xf0 | (cp >> 18);
        out[j++] = 0x80 | ((cp >> 12) & 0x3f);
        out[j++] = 0x80 | ((cp >> 6) & 0x3f);
        out[j++] = 0x80 | (cp & 0x3f);
        i++;
        continue;
      }
      c = 0xfffd; // lone surrogate, as TextEncoder encodes it
    }
    if (j + 3 > cap) return null;
    out[j++] = 0xe0 | (c >> 12);
    out[j++] = 0x80 | ((c >> 6) & 0x3f);
    out[j++] = 0x80 | (c & 0x3f);
  }
  return String.fromCharCode.apply(null, out.subarray(0, j) as unknown as number[]);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Adds a token to the text-keyed map when its bytes are valid UTF-8 (partial sequences are reachable only inside merges). */
function addTextRank(textRanks: Map<string, number>, bytes: string, rank: number): void {
  if (isAscii(bytes)) {
    textRanks.set(bytes, rank);
    return;
  }
  const raw = new Uint8Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) raw[i] = bytes.charCodeAt(i);
  try {
    textRanks.set(strictUtf8.decode(raw), rank);
  } catch {
    // not valid UTF-8 on its own
  }
}

function textRanksOf(ranks: Map<string, number>): Map<string, number> {
  const textRanks = new Map<string, number>();
  for (const [bytes, rank] of ranks) addTextRank(textRanks, bytes, rank);
  return textRanks;
}

/** Raw rank data in js-tiktoken's format. */
export interface RankData {
  bpe_ranks: string;
}

export class Cl100kEncoder {
  private readonly pieceCounts = new Map<string, number>();
  private readonly starts = new Int32Array(OVERSIZED_PIECE_BYTES + 1);
  private readonly pairRanks = new Int32Array(OVERSIZED_PIECE_BYTES + 1);

  /** `ranks`: token bytes as a binary string → rank; `textRanks`: the same for tokens that are valid UTF-8, keyed by text. */
  constructor(
    private readonly ranks: Map<string, number>,
    private readonly textRanks: Map<string, number> = textRanksOf(ranks),
  ) {}

  /** Builds the encoder from js-tiktoken's compressed data ("<prefix> <offset> <base64>…" lines) in one go. */
  static fromRankData(data: RankData): Cl100kEncoder {
    return runSteps(Cl100kEncoder.buildSteps(data));
  }

  /** The same build as steps, so it can run cooperatively (`runStepsCooperatively`) at startup. */
  static *buildSteps(data: RankData): Generator<void, Cl100kEncoder, void> {
    const ranks = new Map<string, number>();
    const textRanks = new Map<string, number>();
    let done = 0;
    for (const line of data.bpe_ranks.split('\n')) {
      if (!line) continue;
      const parts = line.split(' ');
      const offset = Number.parseInt(parts[1] ?? '', 10);
      for (let i = 2; i < parts.length; i++) {
        const bytes = atob(parts[i]!);
        const rank = offset + i - 2;
        ranks.set(bytes, rank);
        addTextRank(textRanks, bytes, rank);
        if (++done % 4096 === 0) yield;
      }
    }
    return new Cl100kEncoder(ranks, textRanks);
  }

  get vocabularySize(): number {
    return this.ranks.size;
  }

  /**
   * Token count of `text` as ordinary text (special-token literals count as text). Exact for every
   * piece up to 256 UTF-8 bytes; larger pieces count as their byte length (never less than exact).
   */
  count(text: string): number {
    let total = 0;
    const n = text.length;
    for (let i = 0; i < n; ) {
      const end = pieceEnd(text, i);
      total += this.countPiece(text.slice(i, end));
      i = end;
    }
    return total;
  }

  /** Token count of one pre-tokenizer piece. */
  countPiece(piece: string): number {
    if (this.textRanks.has(piece)) return 1;
    const cached = this.pieceCounts.get(piece);
    if (cached !== undefined) return cached;
    if (piece.length > OVERSIZED_PIECE_BYTES) return utf8Length(piece);
    const bytes = isAscii(piece) ? piece : utf8Binary(piece);
    if (bytes === null) return utf8Length(piece);
    // A piece with a lone surrogate is not in textRanks but its U+FFFD bytes may be one token.
    if (this.ranks.has(bytes)) return this.remember(piece, 1);
    return this.remember(piece, this.mergeParts(bytes));
  }

  /** Exact token ids of `text` as ordinary text, with no oversized-piece shortcut (for tests and tooling). */
  encode(text: string): number[] {
    const out: number[] = [];
    for (const [piece] of text.matchAll(new RegExp(CL100K_PATTERN_SOURCE, 'gu'))) {
      const bytes = binaryOf(new TextEncoder().encode(piece));
      const whole = this.ranks.get(bytes);
      if (whole !== undefined) {
        out.push(whole);
        continue;
      }
      const bounds = mergeBoundaries(bytes, this.ranks);
      for (let i = 0; i + 1 < bounds.length; i++) out.push(this.ranks.get(bytes.slice(bounds[i], bounds[i + 1]))!);
    }
    return out;
  }

  /** Drops the internal piece cache (benchmarks use it to measure text the encoder has not seen). */
  clearPieceCache(): void {
    this.pieceCounts.clear();
  }

  private remember(piece: string, count: number): number {
    const cache = this.pieceCounts;
    if (cache.size >= PIECE_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
    cache.set(piece, count);
    return count;
  }

  /** Number of parts left after byte-pair merging `b` (a binary string of at most 256 bytes). */
  private mergeParts(b: string): number {
    const ranks = this.ranks;
    const starts = this.starts;
    const pr = this.pairRanks;
    const n = b.length;
    for (let i = 0; i <= n; i++) starts[i] = i;
    for (let i = 0; i + 1 < n; i++) pr[i] = ranks.get(b.slice(i, i + 2)) ?? NO_RANK;
    let parts = n;
    // pr[i] is the rank of joining part i with part i + 1 (valid for i < parts - 1).
    while (parts > 1) {
      let min = NO_RANK;
      let at = -1;
      for (let i = 0; i < parts - 1; i++) {
        if (pr[i]! < min) {
          min = pr[i]!;
          at = i;
        }
      }
      if (at < 0) break;
      starts.copyWithin(at + 1, at + 2, parts + 1);
      pr.copyWithin(at + 1, at + 2, parts);
      parts--;
      pr[at] = at + 2 <= parts ? (ranks.get(b.slice(starts[at]!, starts[at + 2]!)) ?? NO_RANK) : NO_RANK;
      if (at > 0) pr[at - 1] = ranks.get(b.slice(starts[at - 1]!, starts[at + 1]!)) ?? NO_RANK;
    }
    return parts;
  }
}

function binaryOf(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192) as unknown as number[]);
  return s;
}

/** Part boundaries after byte-pair merging (reference form, allocation per call; used by `encode`). */
function mergeBoundaries(b: string, ranks: Map<string, number>): number[] {
  const starts: number[] = [];
  for (let i = 0; i <= b.length; i++) starts.push(i);
  const rankOf = (i: number): number => (i + 2 < starts.length ? (ranks.get(b.slice(starts[i], starts[i + 2])) ?? NO_RANK) : NO_RANK);
  const pr: number[] = [];
  for (let i = 0; i + 1 < starts.length; i++) pr.push(rankOf(i));
  while (starts.length > 2) {
    let min = NO_RANK;
    let at = -1;
    for (let i = 0; i < pr.length; i++) {
      if (pr[i]! < min) {
        min = pr[i]!;
        at = i;
      }
    }
    if (at < 0) break;
    starts.splice(at + 1, 1);
    pr.splice(at + 1, 1);
    pr[at] = rankOf(at);
    if (at > 0) pr[at - 1] = rankOf(at - 1);
  }
  return starts;
}
