import { Tiktoken } from 'js-tiktoken/lite';
import cl100kData from 'js-tiktoken/ranks/cl100k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { Cl100kEncoder } from './cl100k.ts';
import { runStepsCooperatively } from './cooperative.ts';
import { ATTACHMENT_TOKENS, type CountableMessage, heuristicCount, loadCl100k, MESSAGE_OVERHEAD_TOKENS, TokenCounter } from './counter.ts';
import { CJK_ESTIMATES, tokenizerFamily } from './family.ts';

let encoder: Cl100kEncoder;
let reference: Tiktoken;
const ref = (text: string) => reference.encode(text, [], []).length;
const expectedMessage = (m: CountableMessage) => MESSAGE_OVERHEAD_TOKENS + ref(m.role) + ref(m.content) + (m.attachments?.length ?? 0) * ATTACHMENT_TOKENS;

beforeAll(() => {
  encoder = Cl100kEncoder.fromRankData(cl100kData);
  reference = new Tiktoken(cl100kData);
});

async function readyCounter(): Promise<TokenCounter> {
  const counter = new TokenCounter({ load: async () => encoder });
  await counter.init();
  return counter;
}

describe('TokenCounter', () => {
  it('loads js-tiktoken cl100k data by default and counts exactly', async () => {
    const counter = new TokenCounter();
    expect(counter.ready).toBe(false);
    await counter.init();
    expect(counter.ready).toBe(true);
    const text = 'Hello, world! <|endoftext|> 你好';
    expect(counter.countText(text)).toBe(ref(text));
  });

  it('counts a message as framing + role + content + attachments', async () => {
    const counter = await readyCounter();
    const m: CountableMessage = { role: 'user', content: 'Look at these two pictures.', attachments: [{}, {}] };
    expect(counter.countMessage(m)).toBe(expectedMessage(m));
  });

  it('serves repeated texts from the shared LRU', async () => {
    const counter = await readyCounter();
    const text = 'The same text, counted twice.';
    expect(counter.countText(text)).toBe(counter.countText(text));
    expect(counter.stats.tokenized).toBe(1);
    expect(counter.stats.lruHits).toBe(1);
  });

  describe('per-row weak cache', () => {
    const mutations: Array<[string, (m: CountableMessage & { model: string }) => void]> = [
      ['content', (m) => (m.content += ' and one more sentence')],
      ['model', (m) => (m.model = 'anthropic/claude-3.5-sonnet')],
      ['role', (m) => (m.role = 'assistant')],
      ['metrics', (m) => ((m.metrics as { edits: number }).edits += 1)],
      ['attachment count', (m) => (m.attachments as unknown[]).push({ kind: 'image' })],
    ];

    it.each(mutations)('invalidates when the %s changes', async (_name, mutate) => {
      const counter = await readyCounter();
      const row = { role: 'user', content: '日本語のテキスト and English text', metrics: { edits: 0 }, attachments: [] as unknown[], model: 'gpt-4o' };
      const first = counter.countMessage(row, row.model);
      expect(counter.countMessage(row, row.model)).toBe(first);
      expect(counter.stats).toMatchObject({ rowHits: 1, rowMisses: 1 });

      mutate(row);
      const second = counter.countMessage(row, row.model);
      expect(counter.stats).toMatchObject({ rowHits: 1, rowMisses: 2 });
      // the recount is what a cold counter says about the changed row
      const fresh = await readyCounter();
      expect(second).toBe(fresh.countMessage({ ...row }, row.model));
      expect(counter.countMessage(row, row.model)).toBe(second);
      expect(counter.stats.rowHits).toBe(2);
    });

    it('compares metrics by value, so a replaced but equal metrics object still hits', async () => {
      const counter = await readyCounter();
      const row: CountableMessage = { role: 'user', content: 'hi', metrics: { a: 1 } };
      counter.countMessage(row);
      row.metrics = { a: 1 };
      counter.countMessage(row);
      expect(counter.stats).toMatchObject({ rowHits: 1, rowMisses: 1 });
    });

    it('never keeps heuristic counts made before the tokenizer finished loading', async () => {
      let release!: (e: Cl100kEncoder) => void;
      const counter = new TokenCounter({ load: () => new Promise<Cl100kEncoder>((r) => (release = r)) });
      const loading = counter.init();
      const row: CountableMessage = { role: 'user', content: 'さくらの花が咲きました。Cherry blossoms are blooming in the park today.' };
      const early = counter.countMessage(row);
      expect(early).toBe(MESSAGE_OVERHEAD_TOKENS + heuristicCount('user') + heuristicCount(row.content));
      expect(counter.stats.heuristic).toBe(2);
      expect(counter.lru.size).toBe(0);
      release(encoder);
      await loading;
      const exact = counter.countMessage(row);
      expect(exact).toBe(expectedMessage(row));
      expect(exact).not.toBe(early);
      expect(counter.stats).toMatchObject({ rowHits: 0, rowMisses: 2 });
    });
  });

  it('builds the tokenizer cooperatively at startup: timers run while it loads', async () => {
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    const stats = { yields: 0 };
    const built = await runStepsCooperatively(Cl100kEncoder.buildSteps(cl100kData), {}, stats);
    clearInterval(ticker);
    expect(stats.yields).toBeGreaterThan(0);
    expect(ticks).toBeGreaterThan(0);
    expect(built.count('Hello, world! 你好 \uFEFF')).toBe(ref('Hello, world! 你好 \uFEFF'));
    expect((await loadCl100k()).vocabularySize).toBe(100_256);
  });

  it('retries a failed tokenizer load on the next init', async () => {
    let calls = 0;
    const counter = new TokenCounter({
      load: async () => {
        calls++;
        if (calls === 1) throw new Error('disk hiccup');
        return encoder;
      },
    });
    await expect(counter.init()).rejects.toThrow('disk hiccup');
    await counter.init();
    expect(counter.ready).toBe(true);
  });
});

describe('model families and CJK estimates', () => {
  it('maps model ids to families', () => {
    expect(tokenizerFamily('gpt-4o-mini')).toBe('cl100k');
    expect(tokenizerFamily(undefined)).toBe('cl100k');
    expect(tokenizerFamily('anthropic/claude-3.5-sonnet')).toBe('claude');
    expect(tokenizerFamily('claude-sonnet-4')).toBe('claude');
    expect(tokenizerFamily('google/gemini-2.0-flash-exp:free')).toBe('gemini');
    expect(tokenizerFamily('deepseek/deepseek-r1:free')).toBe('deepseek');
    expect(tokenizerFamily('deepseek-chat')).toBe('deepseek');
  });

  it('estimates CJK characters by the table factor and counts the rest with cl100k', async () => {
    const counter = await readyCounter();
    const cjk = '灯塔守护人的女儿在学会读书之前先学会了读天气';
    for (const [family, model] of [
      ['claude', 'claude-3-haiku'],
      ['gemini', 'gemini-1.5-pro'],
      ['deepseek', 'deepseek-chat'],
    ] as const) {
      expect(counter.countText(cjk, model)).toBe(Math.ceil(cjk.length * CJK_ESTIMATES[family].tokensPerCjkChar));
      expect(counter.countText(`Hello ${cjk}`, model)).toBe(ref('Hello ') + Math.ceil(cjk.length * CJK_ESTIMATES[family].tokensPerCjkChar));
      // Latin text is cl100k for every family
      expect(counter.countText('Plain English text.', model)).toBe(ref('Plain English text.'));
    }
    expect(counter.countText(cjk, 'gpt-4o')).toBe(ref(cjk));
  });
});
