import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from './support/fake-anthropic.ts';
import { type FakeOpenAi, startFakeOpenAi } from './support/fake-openai.ts';
import { cacheSessions, createWorld, percent, playTurns, prefixShares, setCacheFriendly } from './support/prompt-cache.ts';
import { Browser, startTestServer, type TestServer } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * Issue 47 points 2 and 3, through the HTTP API: 20 turns on each sample world and on an imported
 * card with a 27-entry lorebook (tests/support/prompt-cache.ts), each request recorded by a
 * loopback provider.
 *  - OpenAI-compatible: the share of each request's prompt characters that repeats the previous
 *    request's prefix (`overall`, the measure), and of the characters that could repeat
 *    (`repeatable`: the prompt less the previous reply, the new player message and what follows it).
 *  - Anthropic (the fake applies Anthropic's prompt-cache rules, tests/support/anthropic-cache.ts):
 *    the share of input tokens read from the cache with the platform's breakpoints.
 * The figures are printed as `prompt-cache:` lines.
 */

const sessions = cacheSessions();
const samples = sessions.filter((s) => s.name !== 'card');
const card = sessions.find((s) => s.name === 'card')!;

describe('a prompt the provider can cache (issue 47 point 2), OpenAI-compatible provider', () => {
  let server: TestServer;
  let openai: FakeOpenAi;
  let player: Browser;

  beforeAll(async () => {
    openai = await startFakeOpenAi({ apiKey: 'sk-player' });
    server = await startTestServer();
    player = new Browser(server.url);
    await signUp(server, player, { email: `cache-${Date.now()}@example.com`, password: 'long enough pw', username: 'cache_player' });
    const put = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: openai.url, apiKey: 'sk-player', defaultModel: 'story-model' } });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    await openai?.close();
  });

  async function measure(session: (typeof sessions)[number], friendly?: boolean) {
    const worldId = await createWorld(player, session);
    if (friendly !== undefined) await setCacheFriendly(player, worldId, friendly);
    const before = openai.completions.length;
    await playTurns(player, worldId, session, (content) => openai.enqueue({ kind: 'completion', content }));
    const bodies = openai.completions.slice(before).map((r) => r.body!);
    expect(bodies).toHaveLength(20);
    const report = prefixShares(bodies, session.lines);
    console.log(
      `prompt-cache: ${session.name}${friendly === undefined ? '' : friendly ? ' (cache-friendly on)' : ' (cache-friendly off)'}: prefix repeated ${percent(report.overall)}, lowest request ${percent(report.min)}, of the repeatable part ${percent(report.repeatable)}`,
    );
    return report;
  }

  for (const session of samples) {
    it(`${session.name} as shipped (cache-friendly placement on): nothing that could repeat moves; no request below 50 %`, async () => {
      const report = await measure(session);
      expect(report.repeatable).toBeGreaterThanOrEqual(0.99);
      expect(report.min).toBeGreaterThanOrEqual(0.5);
      expect(report.overall).toBeGreaterThanOrEqual(0.88);
    }, 120_000);
  }

  it('Rain on Willow Street with the placement off: entries firing above the history cut the prefix (requests below 50 %)', async () => {
    const report = await measure(samples[0]!, false);
    expect(report.min).toBeLessThan(0.5);
    expect(report.repeatable).toBeLessThan(0.95);
  }, 120_000);

  it('the imported card with a 27-entry lorebook: ≥ 90 % with cache-friendly placement, against < 50 % without', async () => {
    const off = await measure(card, false);
    expect(off.overall).toBeLessThan(0.5);
    const on = await measure(card, true);
    expect(on.overall).toBeGreaterThanOrEqual(0.9);
    expect(on.min).toBeGreaterThanOrEqual(0.5);
    expect(on.repeatable).toBeGreaterThanOrEqual(0.95);
  }, 180_000);
});

describe('Anthropic breakpoints (issue 47 point 3): a 20-turn session reads ≥ 70 % of its input tokens from the cache', () => {
  let server: TestServer;
  let anthropic: FakeAnthropic;
  let player: Browser;

  beforeAll(async () => {
    anthropic = await startFakeAnthropic({ apiKey: 'sk-ant-player', promptCache: true });
    server = await startTestServer();
    player = new Browser(server.url);
    await signUp(server, player, { email: `cache-ant-${Date.now()}@example.com`, password: 'long enough pw', username: 'cache_ant' });
    const put = await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: anthropic.url, apiKey: 'sk-ant-player', defaultModel: 'claude-sonnet-4-5', kind: 'anthropic' } });
    expect(put.status).toBe(200);
  });
  afterAll(async () => {
    await server?.stop();
    await anthropic?.close();
  });

  for (const session of [...samples, card]) {
    it(`${session.name}${session === card ? ' (cache-friendly placement on)' : ''}`, async () => {
      const worldId = await createWorld(player, session);
      if (session === card) await setCacheFriendly(player, worldId, true);
      const before = anthropic.cacheUsage.length;
      const requestsBefore = anthropic.completions.length;
      await playTurns(player, worldId, session, (content) => anthropic.enqueue({ kind: 'completion', content }));
      const usage = anthropic.cacheUsage.slice(before);
      expect(usage).toHaveLength(20);
      // the stable head's end and the latest message carry the breakpoints: never more than 4
      for (const request of anthropic.completions.slice(requestsBefore)) {
        const marks = JSON.stringify(request.body).match(/"cache_control"/g)?.length ?? 0;
        expect(marks).toBeGreaterThanOrEqual(1);
        expect(marks).toBeLessThanOrEqual(4);
      }
      const input = usage.reduce((sum, u) => sum + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens, 0);
      const read = usage.reduce((sum, u) => sum + u.cache_read_input_tokens, 0);
      const written = usage.reduce((sum, u) => sum + u.cache_creation_input_tokens, 0);
      // credits at Anthropic's ratios: a cache read 0.1x, a cache write 1.25x an input token
      const cost = (usage.reduce((sum, u) => sum + u.input_tokens, 0) + 0.1 * read + 1.25 * written) / input;
      console.log(`prompt-cache: anthropic ${session.name}: ${input} input tokens, ${percent(read / input)} read from the cache, ${percent(written / input)} written; input cost ${percent(cost)} of uncached`);
      expect(read / input).toBeGreaterThanOrEqual(0.7);
      // the player's usage record says what the cache read (cached tokens are part of tokens in)
      expect(usage.at(-1)!.cache_read_input_tokens).toBeGreaterThan(0);
    }, 120_000);
  }
});
