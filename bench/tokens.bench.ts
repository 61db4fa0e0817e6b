import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CL100K_PATTERN_SOURCE, type CountableMessage, countHistory, countHistoryCooperatively, loadCl100k, TokenCounter } from '@yumina/tokens';
import { clearMergeCache, countTokens } from 'gpt-tokenizer/encoding/cl100k_base';
import { Tiktoken } from 'js-tiktoken/lite';
import cl100kData from 'js-tiktoken/ranks/cl100k_base';
import { afterAll, bench, describe } from 'vitest';

/**
 * Issue 7 benchmark, side by side in one run:
 *  1. counting throughput on 1 MB of ordinary English prose and code: packages/tokens against
 *     js-tiktoken (the reference) and gpt-tokenizer `countTokens`, each on text it has not seen
 *     (caches cleared per iteration) and warm (caches kept). Goal: ≥ 1.0× the faster baseline, unseen.
 *  2. 1 MB input without spaces: packages/tokens (goal < 50 ms) against plain BPE merging on
 *     10,000 characters (gpt-tokenizer; js-tiktoken needs 12–19 s there, 1 MB takes every one > 60 s).
 *  3. max event-loop delay while counting a 200k-token history cooperatively, against the same
 *     history counted synchronously (figures printed after the run).
 */

const root = resolve(import.meta.dirname, '..');
const pattern = new RegExp(CL100K_PATTERN_SOURCE, 'gu');

/** ~1 MB of prose and code from installed packages' READMEs and sources (deterministic order). */
function ordinaryCorpus(target: number): string {
  const files: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const stat = lstatSync(path); // workspace symlinks (node_modules/@yumina) are skipped
      if (stat.isDirectory()) {
        if (depth < 3 && name !== '.bin' && name !== 'dist' && !name.startsWith('.')) walk(path, depth + 1);
      } else if (/^README\.md$|\.ts$|\.mjs$/.test(name) && !name.endsWith('.d.ts') && stat.size > 2_000 && stat.size < 60_000) files.push(path);
    }
  };
  walk(join(root, 'node_modules'), 0);
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; i < files.length && size < target; i++) {
    for (const line of readFileSync(files[i]!, 'utf8').split('\n')) {
      // ordinary text only: no line with an oversized piece (minified code, ASCII-art tables)
      // (and no special-token literals, which gpt-tokenizer refuses by default)
      if (line.length > 2_000 || line.includes('<|') || [...line.matchAll(pattern)].some(([p]) => Buffer.byteLength(p) > 256)) continue;
      parts.push(line);
      size += line.length + 1;
    }
  }
  return parts.join('\n').slice(0, target);
}

const text = ordinaryCorpus(1_000_000);
const encoder = await loadCl100k();
const reference = new Tiktoken(cl100kData);
const counts = { tokens: encoder.count(text), gptTokenizer: countTokens(text) };
if (counts.tokens !== counts.gptTokenizer) throw new Error(`corpus counts differ: ${counts.tokens} vs gpt-tokenizer ${counts.gptTokenizer}`);

function noSpaces(length: number): string {
  let seed = 12345;
  const chars: string[] = [];
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    chars.push(String.fromCharCode(97 + (seed % 26)));
  }
  return chars.join('');
}
const unbroken1m = noSpaces(1_000_000);
const unbroken10k = noSpaces(10_000);

describe(`count 1 MB of ordinary text (${(text.length / 1e6).toFixed(2)} M chars, ${counts.tokens} tokens)`, () => {
  bench('packages/tokens, unseen text', () => {
    encoder.clearPieceCache();
    encoder.count(text);
  }, { time: 3000, warmupIterations: 2 });
  bench('gpt-tokenizer countTokens, unseen text (baseline)', () => {
    clearMergeCache();
    countTokens(text);
  }, { time: 3000, warmupIterations: 2 });
  bench('js-tiktoken encode().length (reference baseline)', () => {
    reference.encode(text, [], []);
  }, { time: 0, iterations: 3, warmupIterations: 1 });
  bench('packages/tokens, warm piece cache', () => {
    encoder.count(text);
  }, { time: 3000, warmupIterations: 2 });
  bench('gpt-tokenizer countTokens, warm merge cache', () => {
    countTokens(text);
  }, { time: 3000, warmupIterations: 2 });
});

describe('input without spaces', () => {
  bench('packages/tokens, 1,000,000 chars (goal < 50 ms)', () => {
    encoder.count(unbroken1m);
  }, { time: 2000, warmupIterations: 2 });
  bench('gpt-tokenizer countTokens, 10,000 chars (plain BPE merging baseline)', () => {
    clearMergeCache();
    countTokens(unbroken10k);
  }, { time: 0, iterations: 5, warmupIterations: 1 });
});

/** ~200k tokens: 2,000 messages of ~100 tokens cut from the ordinary corpus (unseen: caches cleared per run). */
const history: CountableMessage[] = [];
for (let i = 0, at = 0; i < 2000; i++) {
  const content = text.slice(at, at + 400);
  at = (at + 400) % (text.length - 400);
  history.push({ role: i % 2 ? 'assistant' : 'user', content });
}
const delays = { cooperative: 0, synchronous: 0, historyTokens: 0, yields: 0 };

async function measure(run: (counter: TokenCounter) => Promise<unknown> | unknown): Promise<number> {
  const counter = new TokenCounter({ load: async () => encoder });
  await counter.init();
  encoder.clearPieceCache();
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // a timer ticking through the run, so a blocked loop shows up as delay
  const ticker = setInterval(() => {}, 1);
  await new Promise((r) => setTimeout(r, 2));
  await run(counter);
  await new Promise((r) => setTimeout(r, 2));
  clearInterval(ticker);
  h.disable();
  return h.max / 1e6;
}

describe('count a 200k-token history (2,000 messages)', () => {
  bench('packages/tokens countHistoryCooperatively (8 ms slices)', async () => {
    const stats = { yields: 0 };
    const max = await measure(async (counter) => {
      const result = await countHistoryCooperatively(counter, history, {}, stats);
      delays.historyTokens = result.total;
    });
    delays.cooperative = Math.max(delays.cooperative, max);
    delays.yields = stats.yields;
  }, { time: 0, iterations: 8, warmupIterations: 1 });
  bench('countHistory, synchronous (baseline)', async () => {
    const max = await measure((counter) => countHistory(counter, history));
    delays.synchronous = Math.max(delays.synchronous, max);
  }, { time: 0, iterations: 8, warmupIterations: 1 });
});

afterAll(() => {
  console.log(
    `[tokens bench] 200k-token history (${delays.historyTokens} tokens): max event-loop delay cooperative ${delays.cooperative.toFixed(1)} ms ` +
      `(${delays.yields} yields), synchronous ${delays.synchronous.toFixed(1)} ms`,
  );
});
