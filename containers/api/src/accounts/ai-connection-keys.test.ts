import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeAnthropic, startFakeAnthropic } from '../../../../tests/support/fake-anthropic.ts';
import { type FakeGemini, startFakeGemini } from '../../../../tests/support/fake-gemini.ts';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

/**
 * Issue 47, Acceptance: bad input to a player's AI connection gets a clear 4xx and saves nothing.
 * A key in another provider's published format (Anthropic's `sk-ant-`, Google's `AIza`) is refused
 * before it is sent anywhere; a key the provider refuses (401) when its models are listed is named
 * as the key's fault on every kind; an unknown kind and an unlisted model are refused too.
 */

const ANTHROPIC_KEY = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';
const GOOGLE_KEY = 'AIzaSyA1234567890abcdefghijklmnopqrstu';

describe('an AI connection with a key for the wrong provider, or other bad input, saves nothing', () => {
  let server: TestServer;
  let openai: FakeOpenAi;
  let anthropic: FakeAnthropic;
  let gemini: FakeGemini;

  beforeAll(async () => {
    [openai, anthropic, gemini] = await Promise.all([
      startFakeOpenAi({ apiKey: 'sk-proj-right', models: [{ id: 'gpt-listed' }] }),
      startFakeAnthropic({ apiKey: ANTHROPIC_KEY }),
      startFakeGemini({ apiKey: GOOGLE_KEY }),
    ]);
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
    await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
  });

  async function player(name: string) {
    const b = new Browser(server.url);
    await signUp(server, b, { email: `${name}-${Date.now()}@example.com`, password: 'long enough pw', username: name.replace(/-/g, '_') });
    return b;
  }
  const refusal = async (res: Response) => ({ status: res.status, ...((await res.json()) as { error: { code: string; message: string } }).error });
  const nothingStored = async (b: Browser) => expect(await (await b.fetch('/api/settings/ai')).json()).toEqual({ configured: false });
  const requestsTo = () => openai.requests.length + anthropic.requests.length + gemini.requests.length;

  it('an Anthropic key (sk-ant-) on a Gemini or OpenAI-compatible connection, a Google key (AIza) on an Anthropic one: refused before the key leaves, nothing saved', async () => {
    const b = await player('wrong-key');
    const before = requestsTo();
    const cases = [
      { baseUrl: gemini.url, kind: 'gemini', apiKey: ANTHROPIC_KEY, says: /apiKey: this looks like an Anthropic key \(sk-ant-…\), but the connection is Google Gemini at 127\.0\.0\.1: choose the kind Anthropic/ },
      { baseUrl: openai.url, kind: 'openai', apiKey: ANTHROPIC_KEY, says: /apiKey: this looks like an Anthropic key \(sk-ant-…\), but the connection is OpenAI-compatible/ },
      { baseUrl: openai.url, apiKey: GOOGLE_KEY, says: /apiKey: this looks like a Google Gemini key \(AIza…\), but the connection is OpenAI-compatible/ },
      { baseUrl: anthropic.url, kind: 'anthropic', apiKey: GOOGLE_KEY, says: /apiKey: this looks like a Google Gemini key \(AIza…\), but the connection is Anthropic.*The key was not sent or saved\./ },
    ];
    for (const c of cases) {
      const { says, ...json } = c;
      const saved = await refusal(await b.fetch('/api/settings/ai', { method: 'PUT', json: { ...json, defaultModel: 'any-model' } }));
      expect(saved).toMatchObject({ status: 400, code: 'INVALID_REQUEST', message: expect.stringMatching(says) });
      // the unsaved form's probe says the same
      const probed = await refusal(await b.fetch('/api/settings/ai/probe', { method: 'POST', json }));
      expect(probed).toMatchObject({ status: 400, message: expect.stringMatching(says) });
    }
    // no provider heard of the key, and nothing was stored
    expect(requestsTo()).toBe(before);
    await nothingStored(b);
    const rows = await server.ctx.db.primary.query(`select 1 from ai_connections c join accounts a on a.id = c.account_id where a.email like 'wrong-key-%'`);
    expect(rows.rowCount).toBe(0);
  });

  it('a provider’s own key on its own OpenAI-compatible endpoint is not refused (Anthropic and Google serve one)', async () => {
    const b = await player('own-home');
    const saved = await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: 'https://api.anthropic.com/v1', kind: 'openai', apiKey: ANTHROPIC_KEY, defaultModel: 'claude-sonnet-4-5' } });
    expect(saved.status).toBe(200);
    expect(await saved.json()).toMatchObject({ configured: true, kind: 'openai', baseUrl: 'https://api.anthropic.com/v1' });
  });

  it('a key the OpenAI-compatible provider refuses (401) when Save lists its models: the key is named as the fault, nothing saved', async () => {
    const b = await player('refused-key');
    const before = openai.requests.length;
    const res = await refusal(await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: openai.url, apiKey: 'sk-proj-wrong' } }));
    expect(res).toMatchObject({ status: 400, code: 'INVALID_REQUEST', message: expect.stringMatching(/^Invalid request body: apiKey: the provider refused this key \(401\)\. Check that it is this provider's API key/) });
    expect(openai.requests.slice(before).map((r) => [r.path, r.headers.authorization])).toEqual([['/v1/models', 'Bearer sk-proj-wrong']]);
    await nothingStored(b);
    // the right key saves, with the first listed model
    expect(await (await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: openai.url, apiKey: 'sk-proj-right' } })).json()).toMatchObject({ configured: true, defaultModel: 'gpt-listed' });
  });

  it('an unknown kind, and a model the native provider does not list: a 400 that says so, nothing saved', async () => {
    const b = await player('bad-kind');
    expect(await refusal(await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: openai.url, apiKey: 'sk-proj-right', kind: 'cohere' } }))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/kind: must be one of openai, anthropic, gemini/),
    });
    expect(await refusal(await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: gemini.url, apiKey: GOOGLE_KEY, kind: 'gemini', defaultModel: 'gemini-9-ultra' } }))).toMatchObject({
      status: 400,
      message: expect.stringMatching(/defaultModel: Google Gemini does not list the model "gemini-9-ultra"/),
    });
    await nothingStored(b);
  });
});
