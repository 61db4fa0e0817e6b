import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { sampleWorld } from '../../../../tests/support/player-world.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

type Json = Record<string, unknown>;
type Event = { event: string; data: Json };
type Character = { id: string; name: string; muted: boolean; talkativeness: number };

/** A SillyTavern V2 card as players import them. */
const card = (name: string, description: string, talkativeness: number, greeting: string) =>
  JSON.stringify({
    spec: 'chara_card_v2',
    spec_version: '2.0',
    data: { name, description, personality: `${name}'s way`, scenario: '', first_mes: greeting, mes_example: '', creator_notes: '', system_prompt: '', post_history_instructions: '', alternate_greetings: [], tags: [], creator: '', character_version: '', extensions: { talkativeness: String(talkativeness) } },
  });

/** The event stream of a group reply, read to its end. */
async function replies(client: Browser, sessionId: string, body: Json): Promise<{ status: number; events: Event[] }> {
  const res = await client.fetch(`/api/groups/${sessionId}/replies`, { method: 'POST', json: body });
  const text = await res.text();
  if (res.status !== 200) return { status: res.status, events: [{ event: 'refused', data: JSON.parse(text) as Json }] };
  const events = text
    .split('\n\n')
    .filter((block) => block.includes('event: '))
    .map((block) => ({ event: /event: (.*)/.exec(block)![1]!, data: JSON.parse(/data: (.*)/.exec(block)![1]!) as Json }));
  return { status: res.status, events };
}
const speakers = (events: Event[]) => events.filter((e) => e.event === 'speaker').map((e) => e.data.name);

describe('group scenes: several characters in one session (real PostgreSQL and Redis, a loopback provider)', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let player: Browser;
  let stranger: Browser;
  const worlds: Record<string, string> = {};

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'group-key' });
    server = await startTestServer();
    [player, stranger] = [new Browser(server.url), new Browser(server.url)];
    await signUp(server, player, { displayName: 'Ada' });
    await signUp(server, stranger, { displayName: 'Eve' });
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'group-model', apiKey: 'group-key' } });
    const cards: [string, string][] = [
      ['Mira', card('Mira', 'MIRA-CARD: a quiet cartographer.', 0, 'Mira looks up from her maps.')],
      ['Bram', card('Bram', 'BRAM-CARD: a loud innkeeper.', 1, 'Bram slams a mug down.')],
      // a real card of the fixtures: talkativeness 0.7 and a V3 group-only greeting
      ['Wren', readFileSync(new URL('../../../../tests/fixtures/cards/lamplighter-wren.json', import.meta.url), 'utf8')],
    ];
    for (const [key, json] of cards) {
      const res = await player.fetch(`/api/worlds/import?name=${key}.json`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: json });
      expect(res.status, await res.clone().text()).toBe(201);
      worlds[key] = ((await res.json()) as { id: string }).id;
    }
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });
  beforeEach(() => provider.reset());

  const start = async (body: Json = {}) => {
    const res = await player.fetch('/api/groups', { method: 'POST', json: { characters: [worlds.Mira, worlds.Bram, worlds.Wren], ...body } });
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as { session: { id: string }; group: Json; characters: Character[] };
  };
  const session = async (id: string) => (await (await player.fetch(`/api/sessions/${id}`)).json()) as { messages: { role: string; content: string; authorName?: string | null }[] };
  /** The system text of a recorded provider request. */
  const promptOf = (i: number) => JSON.stringify(provider.completions[i]!.body?.messages);

  it('a scene opens with each character greeting under its name (a card’s group-only greeting first); talkativeness comes from the card', async () => {
    const scene = await start();
    expect(scene.characters.map((c) => [c.name, c.talkativeness])).toEqual([
      ['Mira', 0],
      ['Bram', 1],
      ['Lamplighter Wren', expect.closeTo(0.7, 5)],
    ]);
    const { messages } = await session(scene.session.id);
    expect(messages.map((m) => [m.authorName, m.content])).toEqual([
      ['Mira', 'Mira looks up from her maps.'],
      ['Bram', 'Bram slams a mug down.'],
      ['Lamplighter Wren', '*Wren nods to the group.* "Mind the puddles."'],
    ]);
  });

  it('natural: a named character answers first; the card’s talkativeness decides who else speaks; each prompt holds only its speaker’s card', async () => {
    const scene = await start();
    const wren = scene.characters.find((c) => c.name === 'Lamplighter Wren')!;
    // Wren muted: the draws of the rest are certain (Mira 0, Bram 1)
    expect((await player.fetch(`/api/groups/${scene.session.id}/characters/${wren.id}`, { method: 'PATCH', json: { muted: true } })).status).toBe(200);
    provider.enqueue({ kind: 'completion', content: 'The river bends north.' }, { kind: 'completion', content: 'Ale for everyone!' });
    const first = await replies(player, scene.session.id, { content: 'Mira, where does the river go?' });
    expect(first.status).toBe(200);
    expect(speakers(first.events)).toEqual(['Mira', 'Bram']);
    expect(promptOf(0)).toContain('MIRA-CARD');
    expect(promptOf(0)).not.toContain('BRAM-CARD');
    expect(promptOf(0)).toContain('Ada: Mira, where does the river go?');
    expect(promptOf(1)).toContain('BRAM-CARD');
    expect(promptOf(1)).not.toContain('MIRA-CARD');
    // Bram reads Mira's reply under her name, as part of what he answers
    expect(promptOf(1)).toContain('Mira: The river bends north.');
    // unnamed: Mira (talkativeness 0) stays quiet, Bram (1) speaks
    provider.enqueue({ kind: 'completion', content: 'Another round!' });
    const second = await replies(player, scene.session.id, { content: 'Nice evening.' });
    expect(speakers(second.events)).toEqual(['Bram']);
    const { messages } = await session(scene.session.id);
    expect(messages.slice(-4).map((m) => [m.role, m.authorName, m.content])).toEqual([
      ['assistant', 'Mira', 'The river bends north.'],
      ['assistant', 'Bram', 'Ale for everyone!'],
      ['user', 'Ada', 'Nice evening.'],
      ['assistant', 'Bram', 'Another round!'],
    ]);
  });

  it('join shows the others’ descriptions too; choose waits for the player’s pick; everyone answers in list order', async () => {
    const scene = await start({ cardMode: 'join', replyMode: 'choose' });
    const [mira, bram] = scene.characters;
    const none = await replies(player, scene.session.id, { content: 'Who wants to talk?' });
    expect(speakers(none.events)).toEqual([]);
    expect(none.events.at(-1)).toMatchObject({ event: 'end', data: { replies: 0 } });
    provider.enqueue({ kind: 'completion', content: 'Me!' });
    const picked = await replies(player, scene.session.id, { speaker: bram!.id });
    expect(speakers(picked.events)).toEqual(['Bram']);
    expect(promptOf(0)).toContain('BRAM-CARD');
    expect(promptOf(0)).toContain('[Mira] MIRA-CARD');
    // without a pick in choose mode: a clear refusal, nothing written
    const refused = await replies(player, scene.session.id, {});
    expect(refused).toMatchObject({ status: 400, events: [{ data: { error: { code: 'CHOOSE_SPEAKER' } } }] });
    expect((await player.fetch(`/api/groups/${scene.session.id}`, { method: 'PATCH', json: { replyMode: 'everyone' } })).status).toBe(200);
    provider.enqueue({ kind: 'completion', content: 'a' }, { kind: 'completion', content: 'b' }, { kind: 'completion', content: 'c' });
    const all = await replies(player, scene.session.id, { content: 'Everyone, introduce yourselves.' });
    expect(speakers(all.events)).toEqual(['Mira', 'Bram', 'Lamplighter Wren']);
    expect(mira!.name).toBe('Mira');
  });

  it('auto: characters carry on among themselves up to N replies, and Stop ends it', async () => {
    const scene = await start({ replyMode: 'in-turn', autoReplies: 2 });
    provider.enqueue({ kind: 'completion', content: 'one' }, { kind: 'completion', content: 'two' }, { kind: 'completion', content: 'three' });
    const carried = await replies(player, scene.session.id, { content: 'Go on without me.' });
    // in turn after the last greeting (Wren): Mira, then two more in list order
    expect(speakers(carried.events)).toEqual(['Mira', 'Bram', 'Lamplighter Wren']);
    expect(carried.events.at(-1)).toMatchObject({ event: 'end', data: { replies: 3, stopped: false } });

    provider.enqueue({ kind: 'completion', content: 'slow words '.repeat(40), chunks: 40, chunkDelayMs: 100 });
    const running = replies(player, scene.session.id, { content: 'And again.' });
    await expect.poll(() => provider.completions.length, { timeout: 10_000 }).toBeGreaterThan(3);
    expect((await player.fetch(`/api/groups/${scene.session.id}/stop`, { method: 'POST' })).status).toBe(200);
    const stopped = await running;
    expect(stopped.events.at(-1)).toMatchObject({ event: 'end', data: { replies: 0, stopped: true } });
    expect(stopped.events.some((e) => e.event === 'reply:error' && e.data.stopped === true)).toBe(true);
    // the lock is free again: the next message is answered
    provider.enqueue({ kind: 'completion', content: 'back' });
    const after = await replies(player, scene.session.id, { content: 'Hello?', speaker: scene.characters[0]!.id });
    expect(after.events.at(-1), JSON.stringify(after.events)).toMatchObject({ data: { replies: 1 } });
  });

  it("regenerate writes the last reply again as the same character, the earlier text kept as a swipe; the single-character routes refuse a scene", async () => {
    const scene = await start({ replyMode: 'choose' });
    const bram = scene.characters[1]!;
    provider.enqueue({ kind: 'completion', content: 'First take.' }, { kind: 'completion', content: 'Second take.' });
    await replies(player, scene.session.id, { content: 'Bram?', speaker: bram.id });
    const res = await player.fetch(`/api/groups/${scene.session.id}/regenerate`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('"name":"Bram"');
    expect(promptOf(1)).toContain('BRAM-CARD');
    expect(promptOf(1)).not.toContain('First take.');
    const last = (await (await player.fetch(`/api/sessions/${scene.session.id}`)).json()) as { messages: { content: string; authorName: string; swipes: { content: string }[]; activeSwipeIndex: number }[] };
    const reply = last.messages.at(-1)!;
    expect([reply.authorName, reply.content, reply.swipes.map((x) => x.content), reply.activeSwipeIndex]).toEqual(['Bram', 'Second take.', ['First take.', 'Second take.'], 1]);
    for (const path of ['messages', 'regenerate', 'continue']) {
      const refused = await player.fetch(`/api/sessions/${scene.session.id}/${path}`, { method: 'POST', json: path === 'messages' ? { content: 'hi' } : undefined });
      expect([path, refused.status, ((await refused.json()) as { error: { code: string } }).error.code]).toEqual([path, 409, 'GROUP_SESSION']);
    }
  });

  it("a scene's replies through the session's routes: what was sent shows that speaker's prompt (to its owner only); swipes, edit and delete", async () => {
    const scene = await start({ replyMode: 'choose' });
    const [mira, bram] = [scene.characters[0]!, scene.characters[1]!];
    provider.enqueue({ kind: 'completion', content: 'First take.' }, { kind: 'completion', content: 'Second take.' });
    const answered = await replies(player, scene.session.id, { content: 'Bram, a word?', speaker: bram.id });
    const replyId = answered.events.find((e) => e.event === 'reply')!.data.message as { id: string };
    const asked = answered.events.find((e) => e.event === 'message')!.data.message as { id: string };

    // what was sent: Bram's card, not the others'; for the reply and for the player's message it answers
    const sent = await player.fetch(`/api/sessions/${scene.session.id}/messages/${replyId.id}/prompt`);
    expect(sent.status).toBe(200);
    const prompt = (await sent.json()) as { replyId: string; prompt: { messages: { role: string; content: string | null }[] } };
    const system = prompt.prompt.messages.filter((m) => m.role === 'system').map((m) => m.content ?? '').join('\n');
    expect(system).toContain('BRAM-CARD');
    expect(system).not.toContain('MIRA-CARD');
    expect(prompt.prompt.messages.at(-1)?.content).toContain('Bram, a word?');
    const viaMessage = (await (await player.fetch(`/api/sessions/${scene.session.id}/messages/${asked.id}/prompt`)).json()) as { replyId: string };
    expect(viaMessage.replyId).toBe(replyId.id);
    expect((await stranger.fetch(`/api/sessions/${scene.session.id}/messages/${replyId.id}/prompt`)).status).toBe(404);

    // swipes: regenerate keeps the first take; swiping left shows it again, still Bram's
    const regenerated = await player.fetch(`/api/groups/${scene.session.id}/regenerate`, { method: 'POST' });
    expect(regenerated.status).toBe(200);
    // the regeneration streams: read it to its end (its lock is held until then), as the page does
    expect(await regenerated.text()).toContain('event: end');
    type Shown = { messages: { id: string; role: string; content: string; authorName?: string; participantId?: string; activeSwipeIndex: number }[] };
    const swiped = await player.fetch(`/api/sessions/${scene.session.id}/swipe/left`, { method: 'POST' });
    expect(swiped.status).toBe(200);
    const left = ((await swiped.json()) as Shown).messages.at(-1)!;
    expect([left.id, left.content, left.authorName, left.participantId, left.activeSwipeIndex]).toEqual([replyId.id, 'First take.', 'Bram', bram.id, 0]);

    // edit: the text changes, the speaker stays
    const edited = await player.fetch(`/api/sessions/${scene.session.id}/messages/${replyId.id}`, { method: 'PATCH', json: { content: 'Edited by the player.' } });
    expect(edited.status).toBe(200);
    expect(((await edited.json()) as Shown).messages.at(-1)).toMatchObject({ id: replyId.id, content: 'Edited by the player.', authorName: 'Bram' });

    // delete: the reply goes; the scene goes on after the player's message
    const removed = await player.fetch(`/api/sessions/${scene.session.id}/messages/${replyId.id}`, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    const after = (await removed.json()) as Shown;
    expect(after.messages.some((m) => m.id === replyId.id)).toBe(false);
    expect(after.messages.at(-1)).toMatchObject({ id: asked.id, role: 'user' });
    provider.enqueue({ kind: 'completion', content: 'Mira answers instead.' });
    const next = await replies(player, scene.session.id, { speaker: mira.id });
    expect(next.events.at(-1), JSON.stringify(next.events)).toMatchObject({ event: 'end', data: { replies: 1 } });
    const now = await session(scene.session.id);
    expect(now.messages.slice(-2).map((m) => [m.content, m.authorName])).toEqual([
      ['Bram, a word?', 'Ada'],
      ['Mira answers instead.', 'Mira'],
    ]);
  });

  it('a group world names its characters: a player starts its scene from the world alone, played in that world', async () => {
    const tavern = await player.fetch('/api/worlds', { method: 'POST', json: { world: { ...sampleWorld('willow-street'), name: 'The Crossroads Tavern' } } });
    const tavernId = ((await tavern.json()) as { id: string }).id;
    const set = (client: Browser, characters: unknown) => client.fetch(`/api/worlds/${tavernId}/characters`, { method: 'PUT', json: { characters } });
    // refused, nothing stored: one character, itself, a world the author cannot give players, a stranger's hand
    expect((await set(player, [worlds.Mira])).status).toBe(400);
    expect((await set(player, [worlds.Mira, tavernId])).status).toBe(400);
    const theirs = await stranger.fetch('/api/worlds/import?name=z.json', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: card('Zed', 'ZED-CARD', 0.5, 'hi') });
    expect((await set(player, [worlds.Mira, ((await theirs.json()) as { id: string }).id])).status).toBe(404);
    expect((await set(stranger, [worlds.Mira, worlds.Bram])).status).toBe(404);
    expect(await (await player.fetch(`/api/worlds/${tavernId}/characters`)).json()).toEqual({ characters: [] });
    // a world that names none is no group world
    const none = await player.fetch('/api/groups', { method: 'POST', json: { sceneWorldId: tavernId } });
    expect([none.status, ((await none.json()) as { error: { code: string } }).error.code]).toEqual([400, 'NOT_A_GROUP_WORLD']);

    expect((await set(player, [worlds.Bram, worlds.Mira])).status).toBe(200);
    expect(await (await player.fetch(`/api/worlds/${tavernId}/characters`)).json()).toEqual({ characters: [{ id: worlds.Bram, name: 'Bram' }, { id: worlds.Mira, name: 'Mira' }] });
    const started = await player.fetch('/api/groups', { method: 'POST', json: { sceneWorldId: tavernId, replyMode: 'in-turn' } });
    expect(started.status).toBe(201);
    const scene = (await started.json()) as { session: { id: string }; sceneWorldId: string; characters: Character[] };
    expect(scene.sceneWorldId).toBe(tavernId);
    expect(scene.characters.map((c) => c.name)).toEqual(['Bram', 'Mira']);
    provider.enqueue({ kind: 'completion', content: 'Pull up a stool.' });
    expect(speakers((await replies(player, scene.session.id, { content: 'Evening!' })).events)).toEqual(['Bram']);
    // the tavern's world is the scene's: its lore reaches the prompt beside the speaker's card
    expect(promptOf(0)).toContain('BRAM-CARD');
    // none again: no longer a group world
    expect((await set(player, [])).status).toBe(200);
    expect(await (await player.fetch(`/api/worlds/${tavernId}/characters`)).json()).toEqual({ characters: [] });
  });

  it('bad input gets a clear 4xx and writes nothing; a stranger reaches nothing', async () => {
    const count = async () => Number((await server.ctx.db.primary.query<{ n: string }>('select count(*) as n from chat_groups')).rows[0]!.n);
    const before = await count();
    const refuse = async (body: Json, status: number) => expect((await player.fetch('/api/groups', { method: 'POST', json: body })).status).toBe(status);
    await refuse({ characters: [worlds.Mira] }, 400);
    await refuse({ characters: [worlds.Mira, worlds.Mira] }, 400);
    await refuse({ characters: [worlds.Mira, worlds.Bram], replyMode: 'chaos' }, 400);
    await refuse({ characters: [worlds.Mira, '../account'] }, 400);
    // a world the player cannot open (another account's unpublished one)
    const theirs = await stranger.fetch('/api/worlds/import?name=x.json', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: card('Zed', 'ZED', 0.5, 'hi') });
    const theirId = ((await theirs.json()) as { id: string }).id;
    await refuse({ characters: [worlds.Mira, theirId] }, 404);
    expect(await count()).toBe(before);

    const scene = await start();
    expect((await stranger.fetch(`/api/groups/${scene.session.id}`)).status).toBe(404);
    expect((await stranger.fetch(`/api/groups/${scene.session.id}/replies`, { method: 'POST', json: { content: 'hi' } })).status).toBe(404);
    expect((await stranger.fetch(`/api/groups/${scene.session.id}/characters/${scene.characters[0]!.id}`, { method: 'PATCH', json: { muted: true } })).status).toBe(404);
    expect((await player.fetch(`/api/groups/${scene.session.id}/characters/ptc_nobody`, { method: 'PATCH', json: { muted: true } })).status).toBe(404);
    expect((await player.fetch(`/api/groups/${scene.session.id}`, { method: 'PATCH', json: {} })).status).toBe(400);
    expect((await player.fetch(`/api/groups/..%2Faccount`)).status).toBe(404);
  });
});
