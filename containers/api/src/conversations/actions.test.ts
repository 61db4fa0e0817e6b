import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOpenAi, startFakeOpenAi } from '../../../../tests/support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

const sample = (name: string) => JSON.parse(readFileSync(new URL(`../../../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));

interface State {
  variables: Record<string, unknown>;
  pendingChoices?: string[];
  pendingContext: { role: string; content: string; source: string }[];
  directives: { id: string }[];
}
interface Dispatched {
  state: State;
  stateChanges: { variableId: string; oldValue: unknown; newValue: unknown; source: string }[];
  notifications: { message: string; style: string }[];
  audioCommands: { action: string; trackId?: string }[];
  aiRequests: unknown[];
  firedRules: string[];
  firedReactions: string[];
}

describe('player routes: interface actions, events, variables, context, memory, model and provider (real PostgreSQL and Redis)', () => {
  let server: TestServer;
  let provider: FakeOpenAi;
  let player: Browser;
  let stranger: Browser;
  let dungeonId: string;

  beforeAll(async () => {
    provider = await startFakeOpenAi({ apiKey: 'player-key' });
    server = await startTestServer();
    player = new Browser(server.url);
    stranger = new Browser(server.url);
    await signUp(server, player, { email: `actions-${Date.now()}@example.com`, password: 'long enough pw', username: 'ren' });
    await signUp(server, stranger, { email: `stranger-${Date.now()}@example.com`, password: 'long enough pw' });
    await player.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: provider.url, defaultModel: 'story-model', apiKey: 'player-key' } });
    const world = sample('ashen-depths');
    world.entries.push({ ...world.entries[0], id: 'arrival', name: 'Arrival', role: 'greeting', content: 'Welcome, {{user}}. {{persona_backstory}}', position: 0 });
    const d = await player.fetch('/api/worlds', { method: 'POST', json: { world } });
    dungeonId = ((await d.json()) as { id: string }).id;
  });
  afterAll(async () => {
    await server?.stop();
    await provider?.close();
  });

  const create = async () =>
    (await (await player.fetch(`/api/worlds/${dungeonId}/sessions`, { method: 'POST' })).json()) as {
      session: { id: string; memory: string; state: State };
      messages: { content: string }[];
      start: { notifications: unknown[]; audioCommands: { action: string; trackId?: string }[] };
    };

  it('a new session reports its start effects and greets the active persona with its details', async () => {
    const persona = (await (await player.fetch('/api/personas', { method: 'POST', json: { name: 'Captain Vale', backstory: 'Once a ferryman.' } })).json()) as { id: string; backstory: string };
    expect(persona.backstory).toBe('Once a ferryman.');
    await player.fetch(`/api/personas/${persona.id}/activate`, { method: 'POST' });
    const created = await create();
    expect(created.messages[0]!.content).toBe('Welcome, Captain Vale. Once a ferryman.');
    // The opening rule's play-audio runs at session start and comes back for the player to play.
    expect(created.start.audioCommands).toContainEqual(expect.objectContaining({ action: 'play', trackId: 'dungeon-ambience' }));
    expect(created.session.memory).toBe('');
  });

  it("executeAction fires the world's action rule, stores the state, and the next turn starts from it", async () => {
    const { session } = await create();
    await player.fetch(`/api/sessions/${session.id}/variables/hp`, { method: 'PUT', json: { value: 40 } });
    const res = await player.fetch(`/api/sessions/${session.id}/actions/drink-potion`, { method: 'POST' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Dispatched;
    // The potion's rule, and the `recovered` rule its HP crossing (above 50) set off.
    expect(body.firedRules).toEqual(['drink-potion', 'recovered']);
    expect(body.state.variables.hp).toBe(65);
    expect((body.state.variables.inventory as { items: string[] }).items).toEqual(['rusty-sword', 'torch']);
    expect(body.notifications[0]!.message).toBe('You drink the potion and feel warmth return.');
    const stored = (await (await player.fetch(`/api/sessions/${session.id}`)).json()) as { session: { state: State } };
    expect(stored.session.state.variables.hp).toBe(65);
    // No potion left: the rule's condition fails, nothing changes.
    const again = (await (await player.fetch(`/api/sessions/${session.id}/actions/drink-potion`, { method: 'POST' })).json()) as Dispatched;
    expect(again.firedRules).toEqual([]);
    expect(again.state.variables.hp).toBe(65);

    provider.enqueue({ kind: 'completion', content: 'You feel better. [hp: -5]' });
    await (await player.fetch(`/api/sessions/${session.id}/messages`, { method: 'POST', json: { content: 'I walk on' } })).text();
    const after = (await (await player.fetch(`/api/sessions/${session.id}`)).json()) as { session: { state: State } };
    expect(after.session.state.variables.hp).toBe(60);
  });

  it('custom reaction events reach reactions; the engine’s own event types cannot be forged', async () => {
    const { session } = await create();
    await player.fetch(`/api/sessions/${session.id}/variables/depth-level`, { method: 'PUT', json: { value: 9 } });
    const res = await player.fetch(`/api/sessions/${session.id}/events`, { method: 'POST', json: { type: 'spatial:zone-enter', zone: 'dragon-lair' } });
    const body = (await res.json()) as Dispatched;
    expect(body.firedReactions).toEqual(['boss-room-enter']);
    expect(body.state.variables['last-room']).toBe("Ossgrim's lair");
    expect(body.audioCommands).toContainEqual(expect.objectContaining({ trackId: 'boss-theme' }));
    expect(body.state.directives.map((d) => d.id)).toContain('lair');

    for (const forged of [{ type: 'turn:complete', turnCount: 99 }, { type: 'action', actionId: 'drink-potion' }, { type: 'no-namespace' }, {}]) {
      const refused = await player.fetch(`/api/sessions/${session.id}/events`, { method: 'POST', json: forged });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBeTruthy();
    }
  });

  it('setVariable: session scope fires state:changed rules; global scope is kept per player and world; bad input is a 4xx', async () => {
    const { session } = await create();
    const low = (await (await player.fetch(`/api/sessions/${session.id}/variables/hp`, { method: 'PUT', json: { value: 20 } })).json()) as Dispatched;
    expect(low.stateChanges[0]).toMatchObject({ variableId: 'hp', oldValue: 100, newValue: 20, source: 'interface' });
    // The low-HP rule (variable-crossed) reacted: its warning, its sting, its directive.
    expect(low.firedRules).toContain('low-hp-warning');
    expect(low.notifications[0]!.message).toContain('You are badly wounded (20 HP)');
    expect(low.state.directives.map((d) => d.id)).toContain('wounded');

    const global = await player.fetch(`/api/sessions/${session.id}/variables/gems`, { method: 'PUT', json: { value: { count: 3 }, scope: 'global' } });
    expect(((await global.json()) as { globalVariables: unknown }).globalVariables).toEqual({ gems: { count: 3 } });
    const prefs = (await (await player.fetch(`/api/worlds/${dungeonId}/player`)).json()) as { globalVariables: unknown; preferredProvider: string; userPlan: string };
    expect(prefs.globalVariables).toEqual({ gems: { count: 3 } });
    expect(prefs.userPlan).toBe('free');

    expect((await player.fetch(`/api/sessions/${session.id}/variables/no-such`, { method: 'PUT', json: { value: 1 } })).status).toBe(404);
    expect((await player.fetch(`/api/sessions/${session.id}/variables/hp`, { method: 'PUT', json: {} })).status).toBe(400);
    expect((await player.fetch(`/api/sessions/${session.id}/variables/hp`, { method: 'PUT', json: { value: 'lots' } })).status).toBe(400);
    const clamped = (await (await player.fetch(`/api/sessions/${session.id}/variables/hp`, { method: 'PUT', json: { value: 500 } })).json()) as Dispatched;
    expect(clamped.state.variables.hp).toBe(100);
    expect((await player.fetch(`/api/sessions/${session.id}/variables/hp`, { method: 'PUT', json: { value: 1, scope: 'world' } })).status).toBe(400);
    // Someone else's session does not exist for them.
    expect((await stranger.fetch(`/api/sessions/${session.id}/variables/hp`, { method: 'PUT', json: { value: 1 } })).status).toBe(404);
    expect((await stranger.fetch(`/api/sessions/${session.id}/actions/drink-potion`, { method: 'POST' })).status).toBe(404);
  });

  it('injectContext and session memory reach the next prompt; memory is stored per session', async () => {
    const { session } = await create();
    const ctx = (await (await player.fetch(`/api/sessions/${session.id}/context`, { method: 'POST', json: { message: 'A bell tolls below.' } })).json()) as Dispatched;
    expect(ctx.state.pendingContext).toContainEqual({ role: 'system', content: 'A bell tolls below.', source: 'interface' });
    const saved = await player.fetch(`/api/sessions/${session.id}/memory`, { method: 'PUT', json: { memory: 'The ferryman is owed a coin.' } });
    expect(await saved.json()).toEqual({ memory: 'The ferryman is owed a coin.' });
    expect((await player.fetch(`/api/sessions/${session.id}/memory`, { method: 'PUT', json: { memory: 'x'.repeat(20_001) } })).status).toBe(400);
    const other = await create();
    expect(other.session.memory).toBe('');

    provider.enqueue({ kind: 'completion', content: 'The bell again.' });
    await (await player.fetch(`/api/sessions/${session.id}/messages`, { method: 'POST', json: { content: 'I listen' } })).text();
    const prompt = (provider.completions.at(-1)!.body!.messages as { content: string }[]).map((m) => m.content).join('\n');
    expect(prompt).toContain('A bell tolls below.');
    expect(prompt).toContain('The ferryman is owed a coin.');
    const reread = (await (await player.fetch(`/api/sessions/${session.id}`)).json()) as { session: { memory: string; state: State } };
    expect(reread.session.memory).toBe('The ferryman is owed a coin.');
    expect(reread.session.state.pendingContext).toEqual([]);
  });

  it('choices: stored with the session state; pending only while their reply is the newest; clearPendingChoices keeps none', async () => {
    const { session } = await create();
    const read = async () => (await (await player.fetch(`/api/sessions/${session.id}`)).json()) as { session: { state: State }; messages: { content: string; stateSnapshot: State | null; role?: string; failure?: unknown }[] };
    const send = async (content: string) => (await player.fetch(`/api/sessions/${session.id}/messages`, { method: 'POST', json: { content } })).text();
    provider.enqueue({ kind: 'completion', content: 'Two tunnels. [choices: North | South]' });
    await send('I look');
    let now = await read();
    expect(now.session.state.pendingChoices).toEqual(['North', 'South']);
    expect(now.messages.at(-1)!.content).toBe('Two tunnels.');
    expect(now.messages.at(-1)!.stateSnapshot!.pendingChoices).toEqual(['North', 'South']);
    // An interface action leaves them pending.
    const acted = (await (await player.fetch(`/api/sessions/${session.id}/actions/drink-potion`, { method: 'POST' })).json()) as Dispatched;
    expect(acted.state.pendingChoices).toEqual(['North', 'South']);
    // A failed answer to them: they are no longer offered (the newest message is not their reply).
    provider.enqueue({ kind: 'error', status: 502, body: { error: { message: 'Upstream down' } } });
    await send('North');
    now = await read();
    // no reply kept: the failure is on the player's message, now the newest
    expect(now.messages.at(-1)).toMatchObject({ role: 'user', content: 'North', failure: { code: 'AI_PROVIDER_UPSTREAM' } });
    expect(now.session.state.pendingChoices).toEqual([]);
    // Retried: the new reply's choices replace them.
    provider.enqueue({ kind: 'completion', content: 'A chasm. [choices: Jump | Go back]' });
    await (await player.fetch(`/api/sessions/${session.id}/regenerate`, { method: 'POST' })).text();
    expect((await read()).session.state.pendingChoices).toEqual(['Jump', 'Go back']);

    // clearPendingChoices: stored, so the next read has none; another account cannot; a guest is told to sign in.
    expect((await stranger.fetch(`/api/sessions/${session.id}/choices`, { method: 'DELETE' })).status).toBe(404);
    expect((await new Browser(server.url).fetch(`/api/sessions/${session.id}/choices`, { method: 'DELETE' })).status).toBe(401);
    const cleared = (await (await player.fetch(`/api/sessions/${session.id}/choices`, { method: 'DELETE' })).json()) as Dispatched;
    expect(cleared.state.pendingChoices).toEqual([]);
    expect((await read()).session.state.pendingChoices).toEqual([]);
  });

  it("setModel and setPreferredProvider change what the player writes with, in the world that asks", async () => {
    const model = await player.fetch(`/api/worlds/${dungeonId}/player/model`, { method: 'PUT', json: { model: 'openai/gpt-4o-mini' } });
    expect(await model.json()).toEqual({ selectedModel: 'openai/gpt-4o-mini' });
    const prefs = (await (await player.fetch(`/api/worlds/${dungeonId}/player`)).json()) as { selectedModel: string; preferredProvider: string };
    expect(prefs).toMatchObject({ selectedModel: 'openai/gpt-4o-mini', preferredProvider: 'private' });
    // The platform's own picker sets the account's model, and on this world's page drops the world's pick.
    expect(await (await player.fetch('/api/player/model', { method: 'PUT', json: { model: 'picked-in-the-player', worldId: dungeonId } })).json()).toEqual({ selectedModel: 'picked-in-the-player' });
    expect(await (await player.fetch(`/api/worlds/${dungeonId}/player`)).json()).toMatchObject({ selectedModel: 'picked-in-the-player' });
    expect((await player.fetch('/api/player/model', { method: 'PUT', json: { model: 'x', worldId: '../account' } })).status).toBe(400);
    // Without a connection of one's own there is no model to choose.
    expect((await stranger.fetch(`/api/worlds/${dungeonId}/player/model`, { method: 'PUT', json: { model: 'x' } })).status).toBe(409);
    expect(await (await stranger.fetch(`/api/worlds/${dungeonId}/player/provider`, { method: 'PUT', json: { provider: 'private' } })).json()).toMatchObject({ ok: false });
    expect(await (await player.fetch(`/api/worlds/${dungeonId}/player/provider`, { method: 'PUT', json: { provider: 'private' } })).json()).toEqual({ ok: true, provider: 'private' });
    expect((await player.fetch(`/api/worlds/${dungeonId}/player/provider`, { method: 'PUT', json: { provider: 'someone' } })).status).toBe(400);
  });
});
