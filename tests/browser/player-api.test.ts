import { API_MEMBERS } from '@yumina/sandbox';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import type { TestServer } from '../support/server.ts';

const entry = (id: string, name: string, content: string, role: string, position: number) => ({
  id,
  name,
  content,
  role,
  apiRole: 'system',
  section: 'system-presets',
  position,
  enabled: true,
  keywords: [],
  conditions: [],
  conditionLogic: 'all',
  depth: null,
  matchWholeWords: false,
  secondaryKeywords: [],
  secondaryKeywordLogic: 'AND_ANY',
  preventRecursion: false,
  excludeRecursion: false,
  tags: [],
  folderId: null,
});

/**
 * The world's interface calls every member of the sandbox API in the real player, one step after
 * another, and writes a report (member → "ok" or the error) the test reads. Steps that change data
 * wait until the change reaches the frame through the pushed state.
 */
const INTERFACE = String.raw`
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const y = () => window.yumina;
const last = () => y().messages[y().messages.length - 1];
async function until(check, what) {
  for (let i = 0; i < 300; i++) {
    try { if (check(y())) return; } catch (e) {}
    await sleep(100);
  }
  throw new Error('timed out waiting for ' + what);
}
function must(condition, what) { if (!condition) throw new Error(what); }
const STATE_KEYS = ${JSON.stringify(API_MEMBERS.filter((m) => m.transport === 'state').map((m) => m.name))};
let bubbleProps = null;

const STEPS = [
  [STATE_KEYS, async () => {
    const missing = STATE_KEYS.filter((k) => y()[k] === undefined);
    must(missing.length === 0, 'missing state: ' + missing.join(', '));
    must(y().worldName === 'Every Member' && y().worldId && y().sessionId, 'world and session ids');
    must(y().user.name === 'Captain Vale', 'user is the persona: ' + JSON.stringify(y().user));
    must(y().currentUser && y().currentUser.id, 'currentUser');
    must(y().greetingContent === 'Welcome, Captain Vale.', 'greetingContent: ' + y().greetingContent);
    must(y().entries.length === 3 && y().entries[0].keywords, 'entries');
    must(y().language === 'en', 'language');
    must(y().mode === 'session' && y().capabilities.canPersistSession && y().capabilities.canUseSessionApis, 'mode and capabilities');
    must(y().canvasMode === 'custom', 'canvasMode');
    must(y().selectedModel === 'story-model', 'selectedModel: ' + y().selectedModel);
    must(y().preferredProvider === 'private' && typeof y().userPlan === 'string', 'provider and plan');
    must(y().readOnly === false && Array.isArray(y().pendingChoices) && y().error === null, 'readOnly, pendingChoices, error');
    must(typeof y().bgmVolume === 'number' && typeof y().sfxVolume === 'number', 'volumes');
    must(y().isStreaming === false && y().streamingContent === '' && y().streamingReasoning === '', 'streaming fields');
    must(Array.isArray(y().checkpoints) && typeof y().globalVariables === 'object', 'checkpoints and globals');
  }],
  [['getEntry'], async () => {
    must(y().getEntry('Lore One').content.includes('persona_appearance'), 'getEntry by name');
    must(y().getEntry('nothing') === null, 'unknown entry is null');
  }],
  [['onChange', 'offChange'], async () => {
    let calls = 0;
    const listener = () => { calls++; };
    const off = y().onChange(listener);
    await y().setVariable('flag', 'one');
    await until((s) => s.variables.flag === 'one', 'flag one');
    must(calls >= 1, 'onChange was not called');
    y().offChange(listener);
    const before = calls;
    await y().setVariable('flag', 'two');
    await until((s) => s.variables.flag === 'two', 'flag two');
    await sleep(300);
    must(calls === before, 'offChange did not unsubscribe');
    off();
  }],
  [['setVariable'], async () => {
    await y().setVariable('gems', 3, { scope: 'global' });
    await until((s) => s.globalVariables.gems === 3, 'global gems');
  }],
  [['executeAction'], async () => {
    await y().executeAction('heal');
    await until((s) => s.variables.hp === 60, 'hp 60 after heal');
    await y().executeAction('spatial:zone-enter', { zone: 'forest' });
    await until((s) => s.variables.zone === 'forest', 'zone forest');
  }],
  [['injectContext'], async () => { await y().injectContext('The moon is red tonight.'); }],
  [['sendMessage'], async () => {
    await y().sendMessage('hello');
    await until((s) => !s.isStreaming && s.messages.length === 3 && last().status === 'complete', 'reply to hello');
    const m = last();
    for (const k of ['id', 'sessionId', 'role', 'content', 'status', 'stateChanges', 'stateSnapshot', 'swipes', 'activeSwipeIndex', 'model', 'tokenCount', 'generationTimeMs', 'compacted', 'attachments', 'createdAt'])
      must(m[k] !== undefined, 'message field ' + k);
    must(m.errorMessage === null && m.swipes.length === 1 && m.stateSnapshot.hp === 55 && m.stateChanges.length >= 1, 'message values ' + JSON.stringify(m));
  }],
  [['Chat', 'MessageList', 'MessageInput', 'ChatCanvas'], async () => {
    await until(() => bubbleProps && bubbleProps.messageIndex === 2, 'the reply bubble');
    const b = bubbleProps;
    must(b.rawContent.includes('[hp: -5]') && !b.content.includes('[hp:'), 'rawContent is raw, content is shown text');
    must(b.contentHtml.includes('<p>') && b.role === 'assistant' && b.isStreaming === false, 'html, role, streaming');
    must(b.stateSnapshot.hp === 55 && b.variables.hp === 55 && b.renderMarkdown('*x*').includes('<em>x</em>'), 'snapshot, variables, renderMarkdown');
  }],
  [['editMessage'], async () => {
    await y().editMessage(last().id, 'Edited reply.');
    await until(() => last().content === 'Edited reply.', 'edited');
  }],
  [['continueLastMessage'], async () => {
    await y().continueLastMessage();
    await until((s) => !s.isStreaming && last().content.includes('More.'), 'continued');
  }],
  [['regenerateMessage'], async () => {
    await y().regenerateMessage(last().id);
    await until((s) => !s.isStreaming && last().swipes.length === 2, 'second swipe');
    await y().sendMessage('second');
    await until((s) => !s.isStreaming && s.messages.length === 5, 'reply to second');
    const earlier = y().messages[2];
    await y().regenerateMessage(earlier.id);
    await until((s) => !s.isStreaming && s.messages.length === 3 && last().id !== earlier.id && last().content.startsWith('Echo'), 'earlier reply regenerated');
  }],
  [['swipeMessage'], async () => {
    await y().regenerateMessage(last().id);
    await until((s) => !s.isStreaming && last().swipes.length === 2 && last().activeSwipeIndex === 1, 'swipes');
    await y().swipeMessage(last().id, 'left');
    await until(() => last().activeSwipeIndex === 0, 'swiped left');
  }],
  [['saveCheckpoint', 'loadCheckpoints', 'restoreCheckpoint', 'deleteCheckpoint'], async () => {
    const cp = await y().saveCheckpoint('cp1');
    await until((s) => s.checkpoints.length === 1 && s.checkpoints[0].createdAt, 'checkpoint in state');
    must((await y().loadCheckpoints()).length === 1, 'loadCheckpoints');
    await y().sendMessage('third');
    await until((s) => !s.isStreaming && s.messages.length === 5, 'reply to third');
    await y().restoreCheckpoint(cp.id);
    await until((s) => s.messages.length === 3, 'restored');
    await y().deleteCheckpoint(cp.id);
    await until((s) => s.checkpoints.length === 0, 'checkpoint deleted');
  }],
  [['deleteMessage'], async () => {
    await y().deleteMessage(last().id);
    await until((s) => s.messages.length === 2, 'deleted');
  }],
  [['revertToMessage'], async () => {
    await y().revertToMessage(y().messages[0].id);
    await until((s) => s.messages.length === 1, 'reverted');
  }],
  [['switchGreeting'], async () => {
    await y().switchGreeting(1);
    await until((s) => s.greetingContent === 'Hello again, Captain Vale.', 'second greeting');
  }],
  [['stopGeneration'], async () => { await y().stopGeneration(); }],
  [['setComposerDraft'], async () => { await y().setComposerDraft('A draft from the world'); }],
  [['clearPendingChoices'], async () => {
    await y().clearPendingChoices();
    must(y().pendingChoices.length === 0, 'no choices');
  }],
  [['playAudio', 'stopAudio'], async () => {
    await y().playAudio('theme');
    await y().playAudio('chime', { maxDuration: 1, duckBgm: true, volume: 0.5 });
    await y().stopAudio('theme', 0);
  }],
  [['setAudioVolume', 'getAudioVolume'], async () => {
    await y().setAudioVolume('sfx', 0.4);
    await until((s) => s.sfxVolume === 0.4, 'sfx volume in state');
    must(y().getAudioVolume('sfx') === 0.4, 'getAudioVolume');
  }],
  [['storage.get', 'storage.set', 'storage.remove'], async () => {
    await y().storage.set('note', 'kept');
    must((await y().storage.get('note')) === 'kept', 'stored');
    await y().storage.set('other', 'stays');
    await y().storage.remove('note');
    must((await y().storage.get('note')) === null, 'removed');
  }],
  [['toggleImmersive'], async () => {
    await y().toggleImmersive();
    await until((s) => s.canvasMode === 'fullscreen', 'immersive');
    await y().toggleImmersive();
    await until((s) => s.canvasMode === 'custom', 'back');
  }],
  [['copyToClipboard'], async () => { await y().copyToClipboard('copied from the world'); }],
  [['showToast'], async () => { await y().showToast('Hello from the world', 'success'); }],
  [['getModels', 'pinModel', 'unpinModel'], async () => {
    const first = await y().getModels();
    must(first.models.length >= 2 && Array.isArray(first.recentlyUsed), 'catalogue');
    await y().pinModel(first.models[0].id);
    must((await y().getModels()).pinnedModels.includes(first.models[0].id), 'pinned');
    await y().unpinModel(first.models[0].id);
    must(!(await y().getModels()).pinnedModels.includes(first.models[0].id), 'unpinned');
  }],
  [['setModel'], async () => {
    await y().setModel('openai/gpt-4o-mini');
    await until((s) => s.selectedModel === 'openai/gpt-4o-mini', 'selected model');
  }],
  [['setPreferredProvider'], async () => {
    const official = await y().setPreferredProvider('official');
    must(official.ok === false && official.error, 'no official provider here: ' + JSON.stringify(official));
    const own = await y().setPreferredProvider('private');
    must(own.ok === true && own.provider === 'private', 'private: ' + JSON.stringify(own));
  }],
  [['ai.complete'], async () => {
    let deltas = 0;
    const text = await y().ai.complete({ messages: [{ role: 'user', content: 'riddle' }], onDelta: () => { deltas++; } });
    must(text.startsWith('Echo') && deltas >= 1, 'completion ' + text);
  }],
  [['resolveAssetUrl', 'renderMarkdown'], async () => {
    must(y().resolveAssetUrl('asset://ast_AAAAAAAAAAAAAAAAAAAAAA').includes('/api/worlds/' + y().worldId + '/assets/ast_AAAAAAAAAAAAAAAAAAAAAA'), 'asset url ' + y().resolveAssetUrl('asset://ast_AAAAAAAAAAAAAAAAAAAAAA'));
    must(y().renderMarkdown('*x* <b>') === '<p><em>x</em> &lt;b&gt;</p>', 'markdown ' + y().renderMarkdown('*x* <b>'));
  }],
  [['@ai.request'], async () => {
    const howls = () => y().messages.filter((m) => m.role === 'user' && m.content === 'A wolf howls.').length;
    // From an interface event's reaction...
    await y().executeAction('custom:summon');
    await until((s) => !s.isStreaming && howls() === 1 && last().role === 'assistant' && last().status === 'complete', 'the requested reply');
    // ...and from a turn's reaction; the requested reply's own request is not acted on (no endless chain).
    await y().sendMessage('call the wolf');
    await until((s) => !s.isStreaming && howls() === 2 && last().role === 'assistant' && last().status === 'complete', 'the reply requested by a turn');
    await sleep(1500);
    must(!y().messages.some((m) => m.content === 'The wolf howls again.'), 'a chained request was acted on');
  }],
  [['restartChat'], async () => {
    await y().restartChat();
    await until((s) => s.messages.length === 1, 'restarted');
  }],
  [['listSessions', 'createSession', 'deleteSession'], async () => {
    const before = await y().listSessions(y().worldId);
    const created = await y().createSession(y().worldId);
    await until((s) => s.sessionId === created.id, 'in the new session');
    must((await y().listSessions(y().worldId)).length === before.length + 1, 'listed');
    await y().deleteSession(created.id);
    await until((s) => s.sessionId && s.sessionId !== created.id, 'back in another session');
    must((await y().listSessions(y().worldId)).length === before.length, 'deleted');
  }],
  [['getBranchContext', 'branchFromMessage'], async () => {
    const original = y().sessionId;
    must((await y().getBranchContext()).sessionId === original, 'branch context');
    const branch = await y().branchFromMessage(y().messages[0].id);
    await until((s) => s.sessionId === branch.sessionId && s.sessionId !== original, 'in the branch');
    must((await y().getBranchContext()).branchedFrom === original, 'branched from');
  }],
];

export default function EveryMember() {
  const yumina = useYumina();
  const [report, setReport] = React.useState({});
  const [done, setDone] = React.useState(false);
  const font = useAssetFont('asset://no-such-font', 'WorldFont');
  const run = async () => {
    const out = {};
    for (const [members, step] of STEPS) {
      let result = 'ok';
      try { await step(); } catch (e) { result = 'error: ' + (e && e.message ? e.message : String(e)); }
      for (const m of members) out[m] = result;
      setReport({ ...out });
    }
    setDone(true);
  };
  const renderBubble = (b) => {
    if (b.role === 'assistant' && b.messageIndex === 2 && !b.isStreaming) bubbleProps = b;
    return <div className="bubble" data-role={b.role} dangerouslySetInnerHTML={{ __html: b.contentHtml }} />;
  };
  return (
    <div className="p-2">
      <button id="run" type="button" onClick={run}>Run every member</button>
      <button id="chime" type="button" onClick={() => yumina.playAudio('chime', { maxDuration: 2 })}>Chime</button>
      <button id="navigate" type="button" onClick={() => yumina.navigate('/library')}>Library</button>
      <ModelTrigger className="model" />
      <Icons.Heart id="icon-heart" />
      <Icons.NoSuchIcon id="icon-missing" />
      <span id="font">{String(font)}</span>
      <span id="done">{done ? 'done' : ''}</span>
      <pre id="report">{JSON.stringify(report)}</pre>
      <ChatCanvas className="h-64">
        <Chat renderBubble={renderBubble}>
          <MessageList />
          <MessageInput />
        </Chat>
      </ChatCanvas>
    </div>
  );
}
`;

function everyMemberWorld() {
  const world = sampleWorld('willow-street') as Record<string, unknown>;
  return {
    ...world,
    id: '0d5f4a1e-9c2b-4e7d-8a3f-6b1c2d3e4f50',
    name: 'Every Member',
    language: 'en',
    entries: [
      entry('greeting-one', 'Greeting one', 'Welcome, {{user}}.', 'greeting', 0),
      entry('greeting-two', 'Greeting two', 'Hello again, {{user}}.', 'greeting', 1),
      entry('lore-one', 'Lore One', 'The stranger looks {{persona_appearance}}; at heart {{persona_personality}}.', 'lore', 2),
    ],
    variables: [
      { id: 'hp', name: 'Health', type: 'number', defaultValue: 50, min: 0, max: 100, description: '', behaviorRules: '' },
      { id: 'flag', name: 'Flag', type: 'string', defaultValue: '', description: '', behaviorRules: '' },
      { id: 'zone', name: 'Zone', type: 'string', defaultValue: 'town', description: '', behaviorRules: '' },
    ],
    rules: [
      {
        id: 'heal',
        name: 'Heal',
        description: '',
        trigger: { type: 'action', actionId: 'heal' },
        conditions: [],
        conditionLogic: 'all',
        actions: [{ type: 'modify-variable', variableId: 'hp', operation: 'add', value: 10 }],
        priority: 0,
        enabled: true,
        cooldownTurns: null,
        maxFireCount: null,
      },
    ],
    reactions: [
      {
        id: 'enter-forest',
        name: 'Enter the forest',
        when: { eventType: 'spatial:zone-enter', zone: 'forest' },
        conditions: [],
        conditionLogic: 'all',
        then: [
          { type: 'set', path: 'zone', value: 'forest' },
          { type: 'set', path: '@ui.notification', value: 'You enter the forest.' },
        ],
      },
      {
        id: 'summon',
        name: 'Summon',
        when: { eventType: 'custom:summon' },
        conditions: [],
        conditionLogic: 'all',
        then: [{ type: 'set', path: '@ai.request', value: 'A wolf howls.' }],
      },
      {
        id: 'call',
        name: 'Call the wolf',
        when: { eventType: 'message:user', content: 'call the wolf' },
        conditions: [],
        conditionLogic: 'all',
        then: [{ type: 'set', path: '@ai.request', value: 'A wolf howls.' }],
      },
      {
        id: 'again',
        name: 'Howl again',
        when: { eventType: 'message:user', content: 'A wolf howls.' },
        conditions: [],
        conditionLogic: 'all',
        then: [{ type: 'set', path: '@ai.request', value: 'The wolf howls again.' }],
      },
    ],
    audioTracks: [
      { id: 'theme', name: 'Theme', type: 'bgm', url: 'asset://audio/theme.ogg', loop: true, volume: 0.5, fadeIn: null, fadeOut: null, maxDuration: null },
      { id: 'chime', name: 'Chime', type: 'sfx', url: 'asset://audio/chime.ogg', loop: false, volume: 1, fadeIn: null, fadeOut: null, maxDuration: null },
    ],
    bgmPlaylist: null,
    conditionalBGM: [],
    rootComponent: {
      id: '7e2d9c4b-1a3f-4b5e-8c6d-0f9e8d7c6b5a',
      name: 'Every member',
      entryFile: 'index.tsx',
      files: { 'index.tsx': INTERFACE },
      updatedAt: '2026-11-24T00:00:00.000Z',
    },
  };
}

describe('every member of the sandbox API in the real player', () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;

  useBrowserPlatform({ provider: { apiKey: 'member-key' } }, (p) => ({ server, browser, provider } = p));

  it('the world interface calls each member and component; each works, with real persistence', async () => {
    let n = 0;
    provider.setHandler((body) => {
      const messages = body.messages as { role: string; content: string }[];
      n++;
      if (messages.at(-1)!.role === 'assistant') return { kind: 'completion', content: ' More.' };
      const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      return { kind: 'completion', content: lastUser === 'hello' ? `Echo ${n}: hello [hp: -5]` : `Echo ${n}: ${lastUser}` };
    });
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    const [worldId] = await signUpWithWorlds(server, page, {
      providerUrl: provider.url,
      apiKey: 'member-key',
      worlds: [everyMemberWorld()],
      persona: { name: 'Captain Vale', appearance: 'scarred', personality: 'stubborn' },
    });
    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.locator('#run').count(), { timeout: 20_000 }).toBe(1);

    // Session memory, stored per session and sent with the next prompt (step 9).
    await page.getByLabel('Memory', { exact: true }).fill('Vale owes the ferryman a coin.');
    await page.getByRole('button', { name: 'Save memory' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Save memory' }).isDisabled()).toBe(true);

    await frame.locator('#run').click();
    await expect.poll(() => frame.locator('#done').textContent(), { timeout: 240_000, interval: 500 }).toBe('done');
    const report = JSON.parse((await frame.locator('#report').textContent())!) as Record<string, string>;
    const members = [...API_MEMBERS.map((m) => m.name), 'Chat', 'MessageList', 'MessageInput', 'ChatCanvas', '@ai.request'];
    // navigate leaves the page: it runs last, below.
    const failures = members.filter((m) => m !== 'navigate' && report[m] !== 'ok').map((m) => `${m}: ${report[m] ?? 'not run'}`);
    expect(failures).toEqual([]);

    // What the prompt of "hello" carried: injected context, session memory, persona details.
    const hello = provider.completions.find((r) => (r.body!.messages as { content: string }[]).some((m) => m.content === 'hello'))!;
    const prompt = (hello.body!.messages as { content: string }[]).map((m) => m.content).join('\n');
    expect(prompt).toContain('The moon is red tonight.');
    expect(prompt).toContain('Vale owes the ferryman a coin.');
    expect(prompt).toContain('The stranger looks scarred; at heart stubborn.');

    // What the parent page shows: the composer draft, the toast, the clipboard.
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('A draft from the world');
    const log = await page.locator('ul[aria-label="Notifications"]').textContent();
    expect(log).toContain('Hello from the world');
    expect(log).toContain('You enter the forest.');
    expect(log).toContain('that request was skipped');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('copied from the world');

    // Components: a real icon (Lucide), the neutral stand-in for an unknown name, the model trigger and picker.
    expect(await frame.locator('#icon-heart').getAttribute('class')).toContain('lucide');
    expect(await frame.locator('#icon-heart path').count()).toBeGreaterThan(0);
    expect(await frame.locator('#icon-missing').getAttribute('data-icon-missing')).toBe('');
    expect(['true', 'false']).toContain(await frame.locator('#font').textContent());
    const trigger = frame.locator('[data-yumina="model-trigger"]');
    expect(await trigger.textContent()).toBe('openai/gpt-4o-mini');
    await trigger.click();
    await frame.getByRole('dialog', { name: 'Choose a model' }).getByRole('button', { name: /DeepSeek R1/ }).first().click();
    await expect.poll(() => trigger.textContent()).toBe('deepseek/deepseek-r1:free');

    // playAudio with maxDuration: plays, then stops by itself.
    await frame.locator('#chime').click();
    const tracks = () => page.locator('[data-testid="now-playing"]').getAttribute('data-tracks');
    await expect.poll(tracks, { interval: 100 }).toContain('chime');
    await expect.poll(tracks, { timeout: 10_000 }).not.toContain('chime');

    // Persistence: the server holds what the members changed.
    const stored = await page.evaluate(async (id) => {
      const get = (url: string) => fetch(url).then((r) => r.json());
      return { player: await get(`/api/worlds/${id}/player`), storage: await get(`/api/worlds/${id}/storage`), sessions: await get(`/api/worlds/${id}/sessions`) };
    }, worldId!);
    expect(stored.player.globalVariables).toEqual({ gems: 3 });
    expect(stored.player.selectedModel).toBe('deepseek/deepseek-r1:free');
    expect(stored.storage.entries).toMatchObject({ other: 'stays' });
    expect(stored.storage.entries.note).toBeUndefined();
    // The original session and its branch (the created one was deleted).
    expect(stored.sessions.sessions).toHaveLength(2);
    expect(stored.sessions.sessions.some((s: { branchedFrom: string | null }) => s.branchedFrom)).toBe(true);

    // navigate: the page goes where the world asked, within the app.
    await frame.locator('#navigate').click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/library');
    expect(errors).toEqual([]);
    await context.close();
  }, 360_000);
});
