import cl100kData from 'js-tiktoken/ranks/cl100k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { intBetween, pick, seededRandom } from '../testdata/seeded-random.ts';
import { countHistory, countHistoryCooperatively, type TrimDecision, trimHistory, trimHistoryCooperatively } from './budget.ts';
import { Cl100kEncoder } from './cl100k.ts';
import type { CooperativeStats } from './cooperative.ts';
import { type CountableMessage, REPLY_PRIMING_TOKENS, TokenCounter } from './counter.ts';

let encoder: Cl100kEncoder;
beforeAll(() => {
  encoder = Cl100kEncoder.fromRankData(cl100kData);
});

async function freshCounter(): Promise<TokenCounter> {
  const counter = new TokenCounter({ load: async () => encoder });
  await counter.init();
  encoder.clearPieceCache();
  return counter;
}

const words = 'the keeper lighthouse gull weather sea wind lamp oil flour coffee 灯塔 天气 カモメ 등대 🎉 café naïve 42 3.14 { } ( ) ; -> => <|endoftext|>'.split(' ');

function history(random: () => number, count: number, wordsPerMessage: [number, number], unique = ''): CountableMessage[] {
  const out: CountableMessage[] = [];
  for (let i = 0; i < count; i++) {
    const n = intBetween(random, wordsPerMessage[0], wordsPerMessage[1]);
    let content = unique ? `${unique}-${i} ` : '';
    for (let j = 0; j < n; j++) content += `${pick(random, words)}${random() < 0.1 ? '\n' : ' '}`;
    out.push({ role: random() < 0.5 ? 'user' : 'assistant', content, pinned: random() < 0.1 });
  }
  return out;
}

describe('counting a history', () => {
  it('sums exactly under budget and stops as soon as the budget is exceeded', async () => {
    const counter = await freshCounter();
    const messages = history(seededRandom(1), 200, [5, 40]);
    const all = countHistory(counter, messages);
    expect(all.exceeded).toBe(false);
    expect(all.counts).toHaveLength(200);
    expect(all.total).toBe(REPLY_PRIMING_TOKENS + all.counts.reduce((a, b) => a + b, 0));

    const budget = Math.floor(all.total / 3);
    const stopped = await countHistoryCooperatively(counter, messages, { budget });
    expect(stopped.exceeded).toBe(true);
    expect(stopped.counts.length).toBeLessThan(100);
    expect(stopped.total).toBeGreaterThan(budget);
    expect(stopped.total - stopped.counts.at(-1)!).toBeLessThanOrEqual(budget);
    expect(stopped.counts).toEqual(all.counts.slice(0, stopped.counts.length));

    const under = await countHistoryCooperatively(counter, messages, { budget: all.total });
    expect(under).toEqual(all);
  });

  it('yields during a 2,000-message history: a timer set before it fires before it finishes', async () => {
    const counter = await freshCounter();
    const messages = history(seededRandom(2), 2000, [100, 200], 'row');
    let timerFiredAt = -1;
    let step = 0;
    const stats: CooperativeStats = { yields: 0 };
    setTimeout(() => {
      timerFiredAt = step;
    }, 0);
    const result = await countHistoryCooperatively(counter, messages, { onYield: () => step++ }, stats);
    const finishedAt = step;
    expect(result.counts).toHaveLength(2000);
    expect(stats.yields).toBeGreaterThan(1);
    expect(timerFiredAt).toBeGreaterThanOrEqual(0);
    expect(timerFiredAt).toBeLessThan(finishedAt);
  });

  it('yields more often when there is more work', async () => {
    const small: CooperativeStats = { yields: 0 };
    const large: CooperativeStats = { yields: 0 };
    await countHistoryCooperatively(await freshCounter(), history(seededRandom(3), 200, [60, 120], 'small'), {}, small);
    await countHistoryCooperatively(await freshCounter(), history(seededRandom(4), 4000, [60, 120], 'large'), {}, large);
    expect(large.yields).toBeGreaterThan(small.yields);
    expect(large.yields).toBeGreaterThanOrEqual(3);
  });

  it('checks the slice only between messages: one huge message is not interrupted', async () => {
    const counter = await freshCounter();
    const huge = words.join(' ').repeat(20_000);
    const stats: CooperativeStats = { yields: 0 };
    await countHistoryCooperatively(counter, [{ role: 'user', content: huge }], { sliceMs: 0 }, stats);
    expect(stats.yields).toBe(0);
    await countHistoryCooperatively(counter, [{ role: 'user', content: huge }, { role: 'user', content: 'next' }], { sliceMs: 0 }, stats);
    expect(stats.yields).toBe(1);
  });

  it('stops at the next checkpoint when aborted', async () => {
    const counter = await freshCounter();
    const controller = new AbortController();
    const messages = history(seededRandom(5), 500, [10, 20]);
    const run = countHistoryCooperatively(counter, messages, { sliceMs: 0, signal: controller.signal, onYield: () => controller.abort() });
    await expect(run).rejects.toMatchObject({ name: 'AbortError' });
  });
});

/** The rule written the obvious way: drop the oldest unpinned (non-newest) message until it fits. */
function referenceTrim(counts: number[], messages: CountableMessage[], budget: number): TrimDecision {
  const n = messages.length;
  const keep = messages.map(() => true);
  let total = REPLY_PRIMING_TOKENS + counts.reduce((a, b) => a + b, 0);
  for (let i = 0; i < n - 1 && total > budget; i++) {
    if (messages[i]!.pinned) continue;
    keep[i] = false;
    total -= counts[i]!;
  }
  const kept = keep.flatMap((k, i) => (k ? [i] : []));
  const dropped = keep.flatMap((k, i) => (k ? [] : [i]));
  return { kept, dropped, total, overBudget: total > budget };
}

describe('final history trimming', () => {
  it('keeps pinned messages and the newest one, dropping the oldest first', async () => {
    const counter = await freshCounter();
    const messages: CountableMessage[] = [
      { role: 'system', content: 'You are the narrator.', pinned: true },
      { role: 'user', content: 'First question about the lighthouse.' },
      { role: 'assistant', content: 'A long answer about the lighthouse and its keeper.' },
      { role: 'user', content: 'Second question, about the gulls.' },
      { role: 'assistant', content: 'The gulls were the only forecasters worth trusting.' },
      { role: 'user', content: 'And the newest message.' },
    ];
    const counts = countHistory(counter, messages).counts;
    const budget = REPLY_PRIMING_TOKENS + counts[0]! + counts[4]! + counts[5]! + 1;
    const decision = trimHistory(counter, messages, { budget });
    expect(decision.kept).toEqual([0, 4, 5]);
    expect(decision.dropped).toEqual([1, 2, 3]);
    expect(decision.overBudget).toBe(false);

    const tiny = trimHistory(counter, messages, { budget: 5 });
    expect(tiny.kept).toEqual([0, 5]);
    expect(tiny.overBudget).toBe(true);
    expect(await trimHistoryCooperatively(counter, messages, { budget: 5 })).toEqual(tiny);
  });

  it('makes the same decisions synchronously and cooperatively on 1,000 random histories', async () => {
    const random = seededRandom(20240607);
    const counter = await freshCounter();
    let dropsSeen = 0;
    let overSeen = 0;
    for (let run = 0; run < 1000; run++) {
      const messages = history(random, intBetween(random, 0, 40), [0, 30]);
      const counts = countHistory(counter, messages).counts;
      const full = REPLY_PRIMING_TOKENS + counts.reduce((a, b) => a + b, 0);
      const budget = intBetween(random, 0, Math.max(1, Math.ceil(full * 1.2)));
      // a cold counter for one side now and then, so caches differ between the two runs
      const other = run % 3 === 0 ? await freshCounter() : counter;
      const sync = trimHistory(counter, messages, { budget });
      const cooperative = await trimHistoryCooperatively(other, messages, { budget, sliceMs: run % 2 === 0 ? 0 : 8 });
      expect(cooperative, `run ${run}`).toEqual(sync);
      expect(sync, `run ${run}`).toEqual(referenceTrim(counts, messages, budget));
      if (sync.dropped.length) dropsSeen++;
      if (sync.overBudget) overSeen++;
    }
    expect(dropsSeen).toBeGreaterThan(200);
    expect(overSeen).toBeGreaterThan(10);
  });
});
