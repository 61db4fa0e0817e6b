import { describe, expect, it } from 'vitest';
import { parseExampleChat } from './example-chat.ts';
import { OFFICIAL_PRESET_IDS, officialPresets } from './presets.ts';
import { type AssembledPrompt, assemblePrompt, EXAMPLE_CHAT_MARKER, type HistoryMessage, NEW_CHAT_MARKER, toCacheMarkedMessages, toProviderMessages } from './prompt.ts';
import { type ActiveDirective, normalizeState, type WorldState } from './state.ts';
import { runTurn, startSession } from './turn.ts';
import type { EngineEntry, EngineWorld } from './world-types.ts';

const NOW = '2026-05-01T12:00:00Z';

const entries: EngineEntry[] = [
  { id: 'post-b', content: 'Post B', section: 'post-history', position: 2 },
  { id: 'post-a', content: 'Post A for {{char}}', section: 'post-history', position: 1, apiRole: 'user' },
  { id: 'scenario', content: 'Scenario: a dark inn.', section: 'system-presets', position: 2, role: 'scenario' },
  { id: 'character', content: '{{char}} is a bard.', section: 'system-presets', position: 1, role: 'character' },
  { id: 'intro', content: 'You narrate.', section: 'system-presets', position: 0 },
  { id: 'examples', content: '<START>\n{{user}}: Hi\n{{char}}: Welcome, {{user}}.\n<START>\n{{user}}: Ale?\n{{char}}: Coming up.', section: 'examples' },
  { id: 'ale-lore', content: 'Ale is brewed locally.', section: 'chat-history', keywords: ['ale'], position: 1 },
  { id: 'bard-lore', content: 'Bards know songs.', section: 'chat-history', keywords: ['song'], position: 0, depth: 1, apiRole: 'assistant' },
];

const world: EngineWorld = {
  name: 'Inn',
  entries,
  variables: [
    { id: 'coins', type: 'number', defaultValue: 3, min: 0, description: 'money', behaviorRules: 'Spend when buying.' },
    { id: 'bag', type: 'json', defaultValue: { items: ['lute'] } },
  ],
  audioTracks: [{ id: 'tavern', name: 'Tavern tune', type: 'bgm' }],
  settings: { playerName: 'Guest', lorebookScanDepth: 2 },
};

const history: HistoryMessage[] = [
  { role: 'user', content: 'I enter.' },
  { role: 'assistant', content: 'The bard plays a song.' },
  { role: 'user', content: 'One ale, please.' },
];

function directive(id: string, position: ActiveDirective['position'], depth = 0): ActiveDirective {
  return { id, content: `directive ${id}`, position, depth, remainingTurns: null, source: 'test' };
}

function assemble(state: Partial<WorldState> | null = null, extra: Partial<Parameters<typeof assemblePrompt>[2]> = {}): AssembledPrompt {
  return assemblePrompt(world, state, {
    history,
    now: NOW,
    seed: 1,
    sessionId: 's',
    persona: { name: 'Rin', appearance: 'short' },
    summary: 'Earlier: Rin arrived.',
    memory: ['Rin likes ale.'],
    ...extra,
  });
}

describe('the 13-step prompt order', () => {
  const state = normalizeState(world, {
    pendingContext: [{ role: 'system', content: 'One-shot note.', source: 'rule:x' }],
    directives: [directive('top', 'top'), directive('before', 'before_char'), directive('after', 'after_char'), directive('auto', 'auto'), directive('deep', 'depth', 0), directive('bottom', 'bottom')],
  });
  const prompt = assemble(state);
  const sources = prompt.messages.map((message) => `${message.step}:${message.source}`);

  it('lists every step in order with the right sources', () => {
    expect(sources).toEqual([
      '1:directive:top',
      '1:entry:intro',
      '1:directive:before',
      '1:entry:character',
      '1:directive:after',
      '1:entry:scenario',
      '2:persona',
      '3:format:static',
      '4:entry:examples',
      '4:entry:examples',
      '4:entry:examples',
      '4:entry:examples',
      '4:entry:examples',
      '4:entry:examples',
      '6:entry:ale-lore',
      '7:new-chat',
      '8:summary',
      '9:memory',
      '10:history',
      '10:entry:bard-lore',
      '10:history',
      '10:directive:deep',
      '10:history',
      '11:rule:x',
      '12:format:dynamic',
      '12:directive:auto',
      '13:entry:post-a',
      '13:entry:post-b',
      '13:directive:bottom',
    ]);
  });

  it('steps never go backwards', () => {
    const steps = prompt.messages.map((message) => message.step);
    expect([...steps].sort((left, right) => left - right)).toEqual(steps);
  });

  it('puts the cache breakpoint on the last message before step 5', () => {
    expect(prompt.cacheBreakpointIndex).toBe(13);
    expect(prompt.messages[13]).toMatchObject({ step: 4, cacheBreakpoint: true });
    expect(prompt.messages.filter((message) => message.cacheBreakpoint)).toHaveLength(1);
  });

  it('parses examples into user/assistant pairs under the example-chat marker', () => {
    const examples = prompt.messages.filter((message) => message.step === 4).map((message) => [message.role, message.content]);
    expect(examples).toEqual([
      ['system', EXAMPLE_CHAT_MARKER],
      ['user', 'Hi'],
      ['assistant', 'Welcome, Rin.'],
      ['system', EXAMPLE_CHAT_MARKER],
      ['user', 'Ale?'],
      ['assistant', 'Coming up.'],
    ]);
  });

  it('honours apiRole and expands macros in entries', () => {
    const byStep = (source: string) => prompt.messages.find((message) => message.source === source);
    expect(byStep('entry:post-a')).toMatchObject({ role: 'user', content: 'Post A for Inn' });
    expect(byStep('entry:bard-lore')).toMatchObject({ role: 'assistant' });
    expect(byStep('entry:character')).toMatchObject({ role: 'system', content: 'Inn is a bard.' });
    expect(byStep('new-chat')).toMatchObject({ content: NEW_CHAT_MARKER, marker: 'new-chat' });
  });

  it('the static block holds behavior rules and tracks, the dynamic block current values', () => {
    const staticBlock = prompt.messages.find((message) => message.source === 'format:static')?.content ?? '';
    expect(staticBlock).toContain('- coins (number, 0 to ∞): money');
    expect(staticBlock).toContain('Behavior: Spend when buying.');
    expect(staticBlock).toContain('- tavern (bgm): Tavern tune');
    expect(staticBlock).not.toContain('lute');
    const dynamicBlock = prompt.messages.find((message) => message.source === 'format:dynamic')?.content ?? '';
    expect(dynamicBlock).toContain('- coins: 3');
    expect(dynamicBlock).toContain('- bag: {"items":["lute"]}');
  });

  it('depth 0 sits right before the latest message; depth 1 one further back', () => {
    const step10 = prompt.messages.filter((message) => message.step === 10).map((message) => message.content);
    expect(step10).toEqual(['I enter.', 'Bards know songs.', 'The bard plays a song.', 'directive deep', 'One ale, please.']);
  });

  it('toProviderMessages keeps only role and content', () => {
    expect(toProviderMessages(prompt.messages)[0]).toEqual({ role: 'system', content: 'directive top' });
  });
});

describe('prompt details', () => {
  it('without a character preset, before_char and after_char go to the end of step 1', () => {
    const plain: EngineWorld = { ...world, entries: entries.filter((entry) => entry.id !== 'character') };
    const prompt = assemblePrompt(plain, { directives: [directive('before', 'before_char'), directive('after', 'after_char')] }, { history, now: NOW });
    expect(prompt.messages.filter((message) => message.step === 1).map((message) => message.source)).toEqual([
      'entry:intro',
      'entry:scenario',
      'directive:before',
      'directive:after',
    ]);
  });

  it('entries are dropped for budget oldest-history-last, and listed', () => {
    const big: EngineWorld = {
      ...world,
      entries: [
        ...entries,
        { id: 'huge-lore', name: 'Huge lore', content: 'x'.repeat(4000), section: 'chat-history', keywords: ['ale'], position: 5 },
      ],
    };
    const full = assemblePrompt(big, null, { history, now: NOW });
    const budget = full.tokenCount - 500;
    const prompt = assemblePrompt(big, null, { history, now: NOW, budgetTokens: budget });
    expect(prompt.droppedEntries).toMatchObject([{ entryId: 'huge-lore', reason: 'budget' }]);
    expect(prompt.droppedEntries[0]?.message).toContain(`${budget} tokens`);
    expect(prompt.skippedEntries).toContainEqual(prompt.droppedEntries[0]);
    expect(prompt.messages.some((message) => message.source === 'entry:huge-lore')).toBe(false);
    expect(prompt.messages.some((message) => message.source === 'entry:ale-lore')).toBe(true);
    expect(prompt.tokenCount).toBeLessThanOrEqual(budget);
  });

  it('an injected countTokens drives the budget', () => {
    const calls: string[] = [];
    const prompt = assemblePrompt(world, null, {
      history,
      now: NOW,
      countTokens: (text) => {
        calls.push(text);
        return 1;
      },
    });
    expect(calls.length).toBeGreaterThan(5);
    expect(prompt.tokenCount).toBe(calls.length);
  });

  it('oldest history is dropped when the budget runs out, the latest message never', () => {
    const prompt = assemblePrompt(world, null, { history, now: NOW, countTokens: () => 10, budgetTokens: 10 * 14 });
    expect(prompt.droppedHistory).toBeGreaterThan(0);
    expect(prompt.messages.filter((message) => message.source === 'history').at(-1)?.content).toBe('One ale, please.');
  });

  it('a turn result lists entries that could not apply to its prompt', () => {
    const gated: EngineWorld = {
      ...world,
      entries: [{ id: 'vip', name: 'VIP room', content: 'vip', section: 'chat-history', keywords: ['ale'], conditions: [{ variableId: 'coins', operator: 'gte', value: 100 }] }],
    };
    const result = runTurn(gated, null, { userMessage: 'ale!', aiReply: 'Sure.', now: NOW });
    expect(result.skippedEntries).toMatchObject([{ entryId: 'vip', reason: 'conditions' }]);
    const prompt = assemblePrompt(gated, null, { history: [{ role: 'user', content: 'ale' }], now: NOW, budgetTokens: 1 });
    const passed = runTurn(gated, null, { userMessage: 'ale', aiReply: 'ok', now: NOW, skippedEntries: prompt.skippedEntries });
    expect(passed.skippedEntries).toEqual(prompt.skippedEntries);
  });

  it('pending context from a turn appears once in the next prompt (step 11)', () => {
    const rules: EngineWorld = {
      ...world,
      rules: [{ id: 'hint', trigger: { type: 'keyword', keywords: ['ale'] }, actions: [{ type: 'send-context', message: 'The ale is sour.' }] }],
    };
    const first = runTurn(rules, null, { userMessage: 'ale', aiReply: 'ok', now: NOW });
    const next = assemblePrompt(rules, first.state, { history, now: NOW });
    expect(next.messages.filter((message) => message.step === 11).map((message) => message.content)).toEqual(['The ale is sour.']);
    const after = runTurn(rules, first.state, { userMessage: 'hm', aiReply: 'ok', now: NOW });
    expect(assemblePrompt(rules, after.state, { history, now: NOW }).messages.some((message) => message.step === 11)).toBe(false);
  });

  it('pick is the same in the prompt of a turn and differs between sessions', () => {
    const picky: EngineWorld = { ...world, entries: [{ id: 'p', content: '{{pick::a::b::c::d::e::f::g::h}}', section: 'system-presets' }] };
    const first = (sessionId: string) => assemblePrompt(picky, null, { history, now: NOW, seed: 5, sessionId }).messages[0]?.content;
    expect(first('one')).toBe(first('one'));
    const values = new Set(['s1', 's2', 's3', 's4', 's5', 's6', 's7', 's8'].map(first));
    expect(values.size).toBeGreaterThan(1);
  });

  it('entries whose conditions fail are skipped from always-sent sections and reported', () => {
    const gated: EngineWorld = { ...world, entries: [{ id: 'rich', content: 'rich', section: 'system-presets', conditions: [{ variableId: 'coins', operator: 'gt', value: 10 }] }] };
    const prompt = assemblePrompt(gated, null, { history, now: NOW });
    expect(prompt.messages.some((message) => message.source === 'entry:rich')).toBe(false);
    expect(prompt.skippedEntries).toMatchObject([{ entryId: 'rich', reason: 'conditions' }]);
    expect(assemblePrompt(gated, { variables: { coins: 11 } }, { history, now: NOW }).messages[0]?.source).toBe('entry:rich');
  });

  it('the five official presets land in steps 1 and 13 in order, the post-history one as user', () => {
    const presetWorld: EngineWorld = { name: 'P', entries: officialPresets(), variables: [] };
    const prompt = assemblePrompt(presetWorld, null, { history: [{ role: 'user', content: 'hi' }], now: NOW });
    expect(prompt.messages.filter((message) => message.source.startsWith('entry:')).map((message) => [message.step, message.source.slice(6), message.role])).toEqual([
      [1, 'preset-fiction-mode', 'system'],
      [1, 'preset-task', 'system'],
      [1, 'preset-instructions', 'system'],
      [1, 'preset-style', 'system'],
      [13, 'preset-post-history', 'user'],
    ]);
    expect(officialPresets().map((preset) => preset.id)).toEqual([...OFFICIAL_PRESET_IDS]);
  });
});

describe('example chat parsing', () => {
  it.each([
    ['continuation lines join the current message', '{{user}}: one\ntwo\n{{char}}: three', [['user', 'one\ntwo'], ['assistant', 'three']]],
    ['names are accepted as labels', 'Rin: hi\nInn: hello', [['user', 'hi'], ['assistant', 'hello']]],
    ['text without a label is the assistant', 'Just narration.', [['assistant', 'Just narration.']]],
  ])('%s', (_name, content, expected) => {
    const blocks = parseExampleChat(content, 'Inn', 'Rin');
    expect(blocks.flat().map((message) => [message.role, message.content])).toEqual(expected);
  });
});

describe('greetings', () => {
  const greeted: EngineWorld = {
    name: 'Gate',
    entries: [
      { id: 'hello-2', content: 'Second greeting.', section: 'system-presets', role: 'greeting', position: 2 },
      { id: 'hello-1', content: 'Welcome, {{user}}, to {{char}}.', section: 'system-presets', role: 'greeting', position: 1 },
      { id: 'rules', content: 'Rules.', section: 'system-presets' },
    ],
    variables: [],
  };

  it('startSession returns the greetings by position, expanded; prompts leave them out', () => {
    expect(startSession(greeted, { now: NOW, accountName: 'kim' }).greetings).toEqual(['Welcome, kim, to Gate.', 'Second greeting.']);
    const prompt = assemblePrompt(greeted, null, { history: [{ role: 'user', content: 'hi' }], now: NOW });
    expect(prompt.messages.filter((message) => message.step === 1).map((message) => message.source)).toEqual(['entry:rules']);
  });
});

describe('firedEntries: which entries went in, and why', () => {
  it('names each sent entry once with how it fired (always, keyword with the matched keyword), and leaves out the ones that did not fire', () => {
    const prompt = assemble();
    const byId = Object.fromEntries(prompt.firedEntries.map((entry) => [entry.entryId, entry]));
    expect(byId['ale-lore']).toEqual({ entryId: 'ale-lore', name: 'ale-lore', via: 'keyword', keyword: 'ale', step: 6 });
    // "song" is in the assistant's message within the scan depth; the entry goes in at depth 1 (step 10)
    expect(byId['bard-lore']).toMatchObject({ via: 'keyword', keyword: 'song', step: 10 });
    expect(byId.intro).toMatchObject({ via: 'always', step: 1 });
    expect(byId.examples).toMatchObject({ via: 'always', step: 4 });
    expect(byId['post-a']).toMatchObject({ via: 'always', step: 13 });
    expect(prompt.firedEntries.filter((entry) => entry.entryId === 'examples')).toHaveLength(1);
    // without "ale" in the scanned messages the lore entry is not sent, and not listed
    const quiet = assemble(null, { history: [{ role: 'user', content: 'Hello there.' }] });
    expect(quiet.firedEntries.map((entry) => entry.entryId)).not.toContain('ale-lore');
    expect(quiet.firedEntries.map((entry) => entry.entryId)).toContain('intro');
  });
});

describe('a room: several players in one prompt', () => {
  const party = [
    { id: 'acc_a', name: 'Rin', persona: { name: 'Rin', appearance: 'short' } },
    { id: 'acc_b', name: 'Kai', persona: null },
    { id: 'acc_c', name: 'Mo', persona: { name: 'Mo', description: 'A quiet smith.' } },
  ];
  const state = normalizeState(world, { variables: { coins: 9 }, playerVariables: { acc_a: { coins: 1 }, acc_c: { coins: 4, unknown: 7 } } });

  it('step 2 names every player and describes each one who has a persona', () => {
    const prompt = assemble(state, { party });
    const step2 = prompt.messages.filter((message) => message.step === 2);
    expect(step2).toHaveLength(1);
    expect(step2[0]!.content).toContain('Rin, Kai, Mo play together');
    expect(step2[0]!.content).toContain('### Rin\nName: Rin\nAppearance: short');
    expect(step2[0]!.content).toContain('### Mo\nA quiet smith.');
    expect(step2[0]!.content).not.toContain('### Kai');
  });

  it("step 12 lists the shared values, then each player's own under their name (only the world's variables)", () => {
    const dynamicBlock = assemble(state, { party }).messages.find((message) => message.source === 'format:dynamic')?.content ?? '';
    expect(dynamicBlock).toBe('## Current state\n- coins: 9\n- bag: {"items":["lute"]}\n### Rin\n- coins: 1\n### Mo\n- coins: 4');
  });

  it('per-player values survive normalisation and a turn, each player its own copy', () => {
    const result = runTurn(world, state, { now: NOW, userMessage: 'hi', aiReply: '[coins: +1]', party });
    expect(result.state.variables.coins).toBe(10);
    expect(result.state.playerVariables).toEqual({ acc_a: { coins: 1 }, acc_c: { coins: 4, unknown: 7 } });
    expect(result.state.playerVariables!.acc_a).not.toBe(state.playerVariables!.acc_a);
    expect(normalizeState(world, { variables: {} }).playerVariables).toBeUndefined();
  });
});

describe('cache-friendly placement (settings.cacheFriendlyPlacement, issue 47)', () => {
  const cached: EngineWorld = {
    ...world,
    entries: [...entries, { id: 'lamp-lore', content: 'Lamps burn whale oil.', section: 'system-presets', keywords: ['lamp'], position: 3 }],
    settings: { ...world.settings, cacheFriendlyPlacement: true, lorebookScanDepth: 0 },
  };
  const turns: HistoryMessage[] = [
    { role: 'user', content: 'I light a lamp.' },
    { role: 'assistant', content: 'It flickers.' },
    { role: 'user', content: 'One ale, please.' },
    { role: 'assistant', content: 'Here.' },
    { role: 'user', content: 'I sit down.' },
  ];
  const sources = (history: HistoryMessage[], w: EngineWorld = cached) =>
    assemblePrompt(w, null, { history, now: NOW, seed: 1, sessionId: 's' }).messages.map((m) => (m.source === 'history' ? `> ${m.content}` : m.source));

  it('a fired entry is written before the message it first fired at and stays there while its keyword is gone; nothing fired sits above the history', () => {
    const first = sources(turns.slice(0, 3));
    expect(first.slice(first.indexOf('new-chat'))).toEqual(['new-chat', 'entry:lamp-lore', '> I light a lamp.', '> It flickers.', 'entry:ale-lore', '> One ale, please.', 'format:dynamic', 'entry:post-a', 'entry:post-b']);
    expect(first.indexOf('entry:lamp-lore')).toBeGreaterThan(first.indexOf('new-chat'));
    const later = sources(turns);
    // the prompt up to the previous latest message repeats unchanged: only what follows it is new
    const before = sources(turns.slice(0, 3));
    const upTo = before.indexOf('> One ale, please.') + 1;
    expect(later.slice(0, upTo)).toEqual(before.slice(0, upTo));
    expect(later.slice(upTo)).toEqual(['> Here.', '> I sit down.', 'format:dynamic', 'entry:post-a', 'entry:post-b']);
  });

  it('off (the default): the same entries sit in step 1 and step 6, above the history, only while their keywords are scanned', () => {
    const plain = { ...cached, settings: { ...cached.settings, cacheFriendlyPlacement: false } };
    expect(sources(turns.slice(0, 1), plain).indexOf('entry:lamp-lore')).toBeLessThan(sources(turns.slice(0, 1), plain).indexOf('new-chat'));
    expect(sources(turns, plain)).not.toContain('entry:lamp-lore');
  });

  it('marks the stable head and the latest message as cache breakpoints', () => {
    const prompt = assemblePrompt(cached, null, { history: turns, now: NOW, seed: 1, sessionId: 's' });
    expect(prompt.messages.filter((m) => m.cacheBreakpoint).map((m) => m.source)).toEqual(['entry:examples']);
    expect(prompt.messages.filter((m) => m.historyBreakpoint).map((m) => m.content)).toEqual(['I sit down.']);
    expect(toCacheMarkedMessages(prompt.messages).filter((m) => m.cache).length).toBe(2);
  });
});
