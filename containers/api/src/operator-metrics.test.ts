import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../tests/support/fake-openai.ts';
import { sampleWorld } from '../../../tests/support/player-world.ts';
import { Browser, startTestServer, type TestServer } from '../../../tests/support/server.ts';
import { signUp } from '../../../tests/support/sign-up.ts';
import { EMF_METRICS, METRICS_NAMESPACE, operatorMetricsOf } from './operator-metrics.ts';

type Line = Record<string, unknown> & { _aws: { Timestamp: number; CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } };

/** What CloudWatch requires of an EMF line: each declared metric and dimension is a member of the line; at most 100 values a metric. */
function checkEmf(line: Line): void {
  for (const directive of line._aws.CloudWatchMetrics) {
    expect(directive.Namespace).toBe(METRICS_NAMESPACE);
    for (const set of directive.Dimensions) for (const d of set) expect(typeof line[d], d).toBe('string');
    for (const m of directive.Metrics) {
      const value = line[m.Name];
      expect(typeof value === 'number' || (Array.isArray(value) && value.length > 0 && value.length <= 100), m.Name).toBe(true);
    }
  }
}

describe("the operator's metrics (issue 51, point 6)", () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let player: Browser;
  const token = 'operator-metrics-token-0123456789';

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'own-key' });
    server = await startTestServer({ METRICS_TOKEN: token });
    player = new Browser(server.url);
    await signUp(server, player, { displayName: 'Metered' });
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'own-key' } });
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  it('counts turns, their latency, provider errors by kind and open streams, as EMF lines for CloudWatch and at GET /metrics', async () => {
    const metrics = operatorMetricsOf(server.ctx);
    metrics.emf(); // a period of its own from here
    const worldId = ((await (await player.fetch('/api/worlds', { method: 'POST', json: { world: sampleWorld('ashen-depths') } })).json()) as { id: string }).id;
    const turn = async () => {
      const session = ((await (await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } }).session.id;
      return (await player.fetch(`/api/sessions/${session}/messages`, { method: 'POST', json: { content: 'Onward' } })).text();
    };
    provider.enqueue({ kind: 'completion', content: 'The hall is dark.' });
    expect(await turn()).toContain('event: done');
    provider.enqueue({ kind: 'error', status: 401, body: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } } });
    expect(await turn()).toContain('AI_PROVIDER_AUTH');
    // a watching stream open meanwhile
    const controller = new AbortController();
    const overview = await player.fetch(`/api/worlds/${worldId}/updates/events`, { signal: controller.signal });
    expect(overview.status).toBe(200);

    const lines = metrics.emf() as Line[];
    for (const line of lines) checkEmf(line);
    const main = lines[0]!;
    expect(main._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['Service']]);
    expect(main).toMatchObject({ Service: 'api', Turns: 2, TurnsFailed: 1, ProviderErrors: 1, OpenStreams: 1, AdmissionRefusals: 0 });
    expect(main.TurnLatency).toHaveLength(1);
    expect((main.TurnLatency as number[])[0]).toBeGreaterThan(0);
    expect((main.TurnFirstToken as number[]).length).toBeGreaterThanOrEqual(1);
    expect(Object.keys(EMF_METRICS).filter((m) => m in main).sort()).toEqual(Object.keys(EMF_METRICS).sort());
    expect(lines[1]).toMatchObject({ Kind: 'AI_PROVIDER_AUTH', ProviderErrors: 1 });
    expect(lines[1]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['Service', 'Kind']]);

    // the next period starts empty (counts, not totals); a metric without values is left out
    const next = metrics.emf() as Line[];
    expect(next).toHaveLength(1);
    expect(next[0]).toMatchObject({ Turns: 0, TurnsFailed: 0, ProviderErrors: 0 });
    expect('TurnLatency' in next[0]!).toBe(false);
    checkEmf(next[0]!);

    // the same figures in Prometheus' form
    const text = await (await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(text).toContain('yumina_turn_duration_seconds_count{outcome="complete"} 1');
    expect(text).toContain('yumina_turn_duration_seconds_count{outcome="failed"} 1');
    expect(text).toContain('yumina_provider_errors_total{kind="AI_PROVIDER_AUTH"} 1');
    expect(text).toContain('yumina_streams_open 1');
    expect(text).toMatch(/yumina_admission_refused_total 0/);
    controller.abort();
  });
});
