import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAKE_SPEECH, type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const willow = () => JSON.parse(readFileSync(new URL('../../../../packages/world/samples/willow-street.json', import.meta.url), 'utf8')) as Record<string, unknown>;

/**
 * Issue 50's server routes: impersonate and translate (written, never stored), a reply read aloud by
 * the player's connection's /audio/speech, and search of the player's messages (real PostgreSQL
 * and Redis, a loopback OpenAI-compatible provider).
 */
describe('impersonate, translate, speech and search', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    server = await startTestServer({});
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  async function player(name: string) {
    const b = new Browser(server.url);
    await signUp(server, b, { email: `${name}-${Date.now()}@example.com` });
    await b.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'k' } });
    const world = (await (await b.fetch('/api/worlds', { method: 'POST', json: { world: willow() } })).json()) as { id: string };
    const session = (await (await b.fetch(`/api/worlds/${world.id}/sessions`, { method: 'POST' })).json()) as { session: { id: string }; messages: { id: string }[] };
    return { b, worldId: world.id, sessionId: session.session.id, greetingId: session.messages[0]!.id };
  }
  const count = async (b: Browser, id: string) => ((await (await b.fetch(`/api/sessions/${id}`)).json()) as { messages: unknown[] }).messages.length;

  it('impersonates the player without storing a message; translates a reply; refuses bad bodies with 400 and strangers with 404', async () => {
    const { b, sessionId, greetingId } = await player('side');
    provider.enqueue({ kind: 'completion', content: 'I shake the rain off my umbrella and sit down.' });
    const before = await count(b, sessionId);
    const res = await b.fetch(`/api/sessions/${sessionId}/impersonate`, { method: 'POST', json: { draft: '' } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ content: 'I shake the rain off my umbrella and sit down.' });
    const sent = provider.completions.at(-1)!.body!.messages as { role: string; content: string }[];
    expect(sent.at(-1)).toMatchObject({ role: 'system' });
    expect(sent.at(-1)!.content).toContain('next message');
    expect(await count(b, sessionId)).toBe(before);

    provider.enqueue({ kind: 'completion', content: 'Der Regen hört nicht auf.' });
    const tr = await b.fetch(`/api/sessions/${sessionId}/messages/${greetingId}/translate`, { method: 'POST', json: { language: 'de' } });
    expect(tr.status).toBe(200);
    expect(await tr.json()).toEqual({ content: 'Der Regen hört nicht auf.', language: 'German' });
    expect((provider.completions.at(-1)!.body!.messages as { content: string }[])[0]!.content).toContain('into German');

    const bad = await b.fetch(`/api/sessions/${sessionId}/messages/${greetingId}/translate`, { method: 'POST', json: { language: '<script>' } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBeTruthy();
    const extra = await b.fetch(`/api/sessions/${sessionId}/impersonate`, { method: 'POST', json: { draft: 'x', more: 1 } });
    expect(extra.status).toBe(400);

    const stranger = await player('stranger');
    expect((await stranger.b.fetch(`/api/sessions/${sessionId}/impersonate`, { method: 'POST', json: {} })).status).toBe(404);
    expect((await stranger.b.fetch(`/api/sessions/${sessionId}/messages/${greetingId}/translate`, { method: 'POST', json: { language: 'fr' } })).status).toBe(404);
  });

  it('reads a reply aloud through the connection’s /audio/speech, actions skipped when asked', async () => {
    const { b, sessionId, greetingId } = await player('speech');
    await b.fetch(`/api/sessions/${greetingId ? sessionId : ''}/messages/${greetingId}`, { method: 'PATCH', json: { content: '*She smiles.* Welcome back.' } });
    const res = await b.fetch(`/api/sessions/${sessionId}/messages/${greetingId}/speech`, { method: 'POST', json: { voice: 'nova', actions: 'skip' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await res.arrayBuffer()).equals(FAKE_SPEECH)).toBe(true);
    expect(provider.speeches.at(-1)!.body).toEqual({ model: 'tts-1', input: 'Welcome back.', voice: 'nova', response_format: 'mp3' });
    expect(provider.speeches.at(-1)!.headers.authorization).toBe('Bearer k');

    await b.fetch(`/api/sessions/${sessionId}/messages/${greetingId}/speech`, { method: 'POST', json: { voice: 'nova' } });
    expect(provider.speeches.at(-1)!.body!.input).toBe('She smiles. Welcome back.');
    expect((await b.fetch(`/api/sessions/${sessionId}/messages/${greetingId}/speech`, { method: 'POST', json: { voice: 'a b' } })).status).toBe(400);

    provider.speechReply = { status: 200, contentType: 'text/html', body: '<html>' };
    const notAudio = await b.fetch(`/api/sessions/${sessionId}/messages/${greetingId}/speech`, { method: 'POST', json: { voice: 'nova' } });
    expect(notAudio.status).toBeGreaterThanOrEqual(400);
    expect(notAudio.status).not.toBe(500);
    provider.speechReply = { status: 200, contentType: 'audio/mpeg', body: FAKE_SPEECH };
  });

  it('searches the player’s messages in a session and across sessions, paginated, literally, never another account’s', async () => {
    const { b, worldId, sessionId } = await player('search');
    for (const text of ['The lighthouse at dusk', 'A 100% sure bet', 'lighthouse keeper again']) {
      provider.enqueue({ kind: 'completion', content: `Reply to ${text}` });
      await (await b.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: text } })).text();
    }
    const other = (await (await b.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' })).json()) as { session: { id: string } };
    provider.enqueue({ kind: 'completion', content: 'Elsewhere' });
    await (await b.fetch(`/api/sessions/${other.session.id}/messages`, { method: 'POST', json: { content: 'Another LIGHTHOUSE' } })).text();

    type Page = { results: { messageId: string; sessionId: string; snippet: string; role: string; worldId: string }[]; nextCursor: string | null };
    const all = (await (await b.fetch('/api/search/messages?q=lighthouse')).json()) as Page;
    expect(all.results.map((r) => r.snippet).slice(0, 1)).toEqual(['Another LIGHTHOUSE']);
    expect(all.results.map((r) => r.snippet).sort()).toEqual(['Another LIGHTHOUSE', 'Reply to The lighthouse at dusk', 'Reply to lighthouse keeper again', 'The lighthouse at dusk', 'lighthouse keeper again']);
    expect(all.results[0]!.worldId).toBe(worldId);
    const one = (await (await b.fetch(`/api/search/messages?q=lighthouse&sessionId=${sessionId}&limit=3`)).json()) as Page;
    expect(one.results.map((r) => r.snippet)).toEqual(['Reply to lighthouse keeper again', 'lighthouse keeper again', 'Reply to The lighthouse at dusk']);
    expect(one.results.every((r) => r.sessionId === sessionId)).toBe(true);
    const next = (await (await b.fetch(`/api/search/messages?q=lighthouse&sessionId=${sessionId}&limit=3&cursor=${encodeURIComponent(one.nextCursor!)}`)).json()) as Page;
    expect(next.results.map((r) => r.snippet)).toEqual(['The lighthouse at dusk']);
    expect(next.nextCursor).toBeNull();
    // % is a character, not a wildcard
    const percent = (await (await b.fetch('/api/search/messages?q=0%25 s')).json()) as Page;
    expect(percent.results.map((r) => r.snippet).sort()).toEqual(['A 100% sure bet', 'Reply to A 100% sure bet']);
    expect((await b.fetch(`/api/search/messages?q=light&sessionId=${sessionId}&cursor=zz`)).status).toBe(400);
    expect((await b.fetch('/api/search/messages?q=a')).status).toBe(400);
    expect((await b.fetch('/api/search/messages?q=light&limit=500')).status).toBe(400);

    const stranger = await player('search-stranger');
    expect(((await (await stranger.b.fetch('/api/search/messages?q=lighthouse')).json()) as Page).results).toEqual([]);
    expect((await stranger.b.fetch(`/api/search/messages?q=lighthouse&sessionId=${sessionId}`)).status).toBe(404);
  });
});
