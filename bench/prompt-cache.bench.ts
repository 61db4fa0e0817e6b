import { afterAll, beforeAll, bench, describe } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../tests/support/fake-anthropic.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../tests/support/fake-openai.ts';
import { type CacheSession, cacheSessions, createWorld, percent, playTurns, prefixShares, setCacheFriendly } from '../tests/support/prompt-cache.ts';
import { Browser, startTestServer, type TestServer } from '../tests/support/server.ts';
import type { MailServer } from '../tests/support/sign-up.ts';
import { type BaselineServer, baselineCheckout, startBaselineServer } from './baseline.ts';
import { benchSignUp } from './sign-up.ts';

/**
 * Issue 47 point 5: what a 20-turn session costs in prompt tokens, on each sample world and on an
 * imported card with a 27-entry lorebook (tests/support/prompt-cache.ts), today (BASELINE: main
 * before this work, a4f46c9, run from its own checkout by ./baseline.ts, with its own samples) and
 * now (this tree; the card with and without cache-friendly placement). Through the HTTP API, on
 * real PostgreSQL and Redis, each session played twice: on a loopback OpenAI-compatible provider
 * (the share of prompt characters that repeat the previous request's prefix) and on the loopback
 * Anthropic fake that applies Anthropic's prompt-cache rules (tests/support/anthropic-cache.ts:
 * the share of input tokens read from the cache, and the input's cost at Anthropic's prices: a
 * cache read 0.1x, a cache write 1.25x an uncached input token; printed in credits of 1,000
 * uncached input tokens, and as a share of the uncached cost). Printed as `prompt-cache:` lines.
 * The `bench` timing is one session's 20 turns on this tree, for information.
 * PROMPT_CACHE_BENCH_REVISION=<commit> names another baseline.
 */
const BASELINE = process.env.PROMPT_CACHE_BENCH_REVISION ?? 'a4f46c92fcedcd3127978238bc25025b049b1b3b';

let server: TestServer | undefined;
let baseline: BaselineServer | undefined;
let openai: FakeOpenAi;
let anthropic: FakeAnthropic;

interface Figures {
  repeated: number;
  lowest: number;
  inputTokens: number;
  readShare: number;
  credits: number;
  costShare: number;
}

async function player(target: MailServer, kind: 'openai' | 'anthropic', label: string): Promise<Browser> {
  const browser = new Browser(target.url);
  await benchSignUp(target, browser, { email: `cache-${label}-${kind}-${Date.now()}@example.com` });
  const json =
    kind === 'openai'
      ? { baseUrl: openai.url, apiKey: 'sk-bench', defaultModel: 'story-model' }
      : { baseUrl: anthropic.url, apiKey: 'sk-ant-bench', defaultModel: 'claude-sonnet-4-5', kind: 'anthropic' };
  const res = await browser.fetch('/api/settings/ai', { method: 'PUT', json });
  if (res.status !== 200) throw new Error(`AI settings on ${label}: ${res.status} ${await res.text()}`);
  return browser;
}

async function measure(players: { openai: Browser; anthropic: Browser }, session: CacheSession, friendly: boolean | null): Promise<Figures> {
  const ids = { openai: await createWorld(players.openai, session), anthropic: await createWorld(players.anthropic, session) };
  if (friendly !== null) {
    await setCacheFriendly(players.openai, ids.openai, friendly);
    await setCacheFriendly(players.anthropic, ids.anthropic, friendly);
  }
  const before = openai.completions.length;
  await playTurns(players.openai, ids.openai, session, (content) => openai.enqueue({ kind: 'completion', content }));
  const prefix = prefixShares(openai.completions.slice(before).map((r) => r.body!));
  const usageBefore = anthropic.cacheUsage.length;
  await playTurns(players.anthropic, ids.anthropic, session, (content) => anthropic.enqueue({ kind: 'completion', content }));
  const usage = anthropic.cacheUsage.slice(usageBefore);
  const sum = (f: (u: (typeof usage)[number]) => number) => usage.reduce((total, u) => total + f(u), 0);
  const inputTokens = sum((u) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens);
  const weighted = sum((u) => u.input_tokens + 0.1 * u.cache_read_input_tokens + 1.25 * u.cache_creation_input_tokens);
  return { repeated: prefix.overall, lowest: prefix.min, inputTokens, readShare: sum((u) => u.cache_read_input_tokens) / inputTokens, credits: weighted / 1000, costShare: weighted / inputTokens };
}

const line = (who: string, name: string, f: Figures) =>
  `prompt-cache: ${name.padEnd(34)} ${who.padEnd(8)} prefix repeated ${percent(f.repeated).padStart(7)} (lowest ${percent(f.lowest).padStart(7)}); Anthropic: ${String(f.inputTokens).padStart(6)} input tokens, ${percent(f.readShare).padStart(7)} read from the cache, input cost ${f.credits.toFixed(1).padStart(5)} credits (${percent(f.costShare)} of uncached)`;

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([startFakeOpenAi({ apiKey: null }), startFakeAnthropic({ apiKey: null, promptCache: true })]);
  const env = { AI_PRIVATE_NETWORK_ACCESS: 'allow' };
  const [now, today] = await Promise.allSettled([startTestServer(env), startBaselineServer(baselineCheckout(BASELINE), { ...env, SIGNUP_RATE_LIMIT_PER_HOUR: '1000' })]);
  if (now.status === 'fulfilled') server = now.value;
  if (today.status === 'fulfilled') baseline = today.value;
  if (now.status === 'rejected') throw now.reason;
  if (today.status === 'rejected') throw today.reason;
  const nowPlayers = { openai: await player(server!, 'openai', 'now'), anthropic: await player(server!, 'anthropic', 'now') };
  const todayPlayers = { openai: await player(baseline!, 'openai', 'today'), anthropic: await player(baseline!, 'anthropic', 'today') };
  const root = new URL(`file://${baselineCheckout(BASELINE)}/`);
  const todaySessions = cacheSessions(root);
  const lines: string[] = [];
  for (const session of cacheSessions()) {
    const old = todaySessions.find((s) => s.name === session.name)!;
    const label = session.name === 'card' ? 'card, 27-entry lorebook' : session.name;
    const today = await measure(todayPlayers, old, null);
    lines.push(line(BASELINE.slice(0, 7), label, today));
    if (session.name === 'card') {
      const off = await measure(nowPlayers, session, false);
      lines.push(line('now', `${label} (placement off)`, off));
      const on = await measure(nowPlayers, session, true);
      lines.push(line('now', `${label} (cache-friendly)`, on));
      lines.push(`prompt-cache: ${label} input cost now / today: ${(on.credits / today.credits).toFixed(2)}x with cache-friendly placement, ${(off.credits / today.credits).toFixed(2)}x without`);
    } else {
      const now = await measure(nowPlayers, session, null);
      lines.push(line('now', label, now));
      lines.push(`prompt-cache: ${label} input cost now / today: ${(now.credits / today.credits).toFixed(2)}x`);
    }
  }
  for (const text of lines) console.log(text);
}, 1_800_000);

afterAll(async () => {
  await server?.stop();
  await baseline?.stop();
  await Promise.all([openai?.close(), anthropic?.close()]);
});

describe('prompt caching: a 20-turn session (issue 47)', () => {
  bench(
    'Rain on Willow Street, 20 turns through the HTTP API (this tree)',
    async () => {
      const session = cacheSessions().find((s) => s.name === 'willow-street')!;
      const browser = await player(server!, 'openai', `timed-${Math.random().toString(36).slice(2)}`);
      await playTurns(browser, await createWorld(browser, session), session, (content) => openai.enqueue({ kind: 'completion', content }));
    },
    { iterations: 1, time: 1, warmupIterations: 0, warmupTime: 0 },
  );
});
