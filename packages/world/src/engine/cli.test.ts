import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, npmRunWorld, worldCli } from '../../../../tests/support/world-cli.ts';

/** The CLI started as a process of its own (compiled once: tests/support/world-cli.ts). */
let cli: (...args: string[]) => CliResult;

const world = {
  version: '20.0.0',
  name: 'CLI Keep',
  description: 'A tiny world for the command line test.',
  author: 'Tester',
  entries: [
    {
      id: 'intro',
      name: 'Intro',
      content: 'You are {{char}}, keeper of the gate. {{user}} approaches.',
      role: 'system',
      apiRole: 'system',
      section: 'system-presets',
      position: 0,
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
    },
    {
      id: 'gate-lore',
      name: 'Gate lore',
      content: 'The gate opens only for those with a key.',
      role: 'lore',
      apiRole: 'system',
      section: 'chat-history',
      position: 1,
      enabled: true,
      keywords: ['gate'],
      conditions: [],
      conditionLogic: 'all',
      depth: null,
      matchWholeWords: true,
      secondaryKeywords: [],
      secondaryKeywordLogic: 'AND_ANY',
      preventRecursion: false,
      excludeRecursion: false,
      tags: [],
      folderId: null,
    },
  ],
  variables: [
    { id: 'hp', name: 'Health', type: 'number', defaultValue: 20, min: 0, max: 20, description: 'health', behaviorRules: 'Falls when hurt.' },
    { id: 'has-key', name: 'Has key', type: 'boolean', defaultValue: false, description: 'key', behaviorRules: '' },
  ],
  rules: [
    {
      id: 'hurt',
      name: 'Hurt',
      description: '',
      trigger: { type: 'variable-crossed', variableId: 'hp', direction: 'drops-below', threshold: 10 },
      conditions: [],
      conditionLogic: 'all',
      actions: [{ type: 'notify-player', style: 'warning', message: 'Careful, {{user}}!' }],
      priority: 0,
      enabled: true,
      cooldownTurns: null,
      maxFireCount: null,
    },
  ],
  reactions: [],
  rootComponent: null,
  components: [],
  audioTracks: [],
  bgmPlaylist: null,
  conditionalBGM: [],
  customUI: [],
  entryFolders: [],
  customTags: [],
  customTagColors: {},
  editorMode: 'simple',
  settings: {},
};

let dir = '';
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  cli = await worldCli(20_000);
  dir = mkdtempSync(join(tmpdir(), 'world-cli-'));
  writeFileSync(file('world.json'), JSON.stringify(world));
  writeFileSync(file('invalid.json'), JSON.stringify({ ...world, name: '', variables: [{ ...world.variables[0], id: 'Not Kebab' }] }));
  writeFileSync(file('broken.json'), '{"name": "oops",');
  writeFileSync(file('state.json'), JSON.stringify({ variables: { hp: 12 } }));
  writeFileSync(file('history.json'), JSON.stringify([{ role: 'user', content: 'Hello.' }, { role: 'assistant', content: 'Who goes there?' }]));
  writeFileSync(file('bad-history.json'), JSON.stringify([{ who: 'me' }]));
});

describe('npm run world (spawned)', () => {
  it('validate prints "valid" (then its warnings) and exits 0, through `npm run world` itself', () => {
    const result = npmRunWorld('validate', file('world.json'));
    expect(result.stdout.trim().split('\n')).toEqual([
      'valid',
      'warning variables[1].id: variable "has-key" is read by no entry, condition, rule, reaction, music or interface file; only the AI sees it',
    ]);
    expect(result.status).toBe(0);
  });

  it('validate prints every issue with its path and exits 1', () => {
    const result = cli('validate', file('invalid.json'));
    expect(result.status).toBe(1);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^invalid: \d+ issues?$/);
    expect(lines.some((line) => line.startsWith('name'))).toBe(true);
    expect(lines.some((line) => line.startsWith('variables[0].id'))).toBe(true);
  });

  it.each([
    ['a missing file', ['validate', '/nowhere/world.json'], /world file not found: \/nowhere\/world\.json/],
    ['bad JSON', ['validate', 'BROKEN'], /is not valid JSON/],
    ['a missing state file', ['turn', 'WORLD', '--state', '/nowhere/s.json', '--user', 'a', '--reply', 'b'], /state file not found/],
    ['a bad history file', ['prompt', 'WORLD', '--history', 'BAD_HISTORY'], /history file .* must be a JSON array/],
    ['an unknown command', ['explode', 'WORLD'], /unknown command "explode"/],
    ['turn without --reply', ['turn', 'WORLD', '--user', 'hi'], /turn needs --user and --reply/],
    ['an unknown flag', ['prompt', 'WORLD', '--bogus', 'x'], /Unknown option '--bogus'/],
  ])('%s gives one clear line and exit 2', (_name, args, message) => {
    const mapped = args.map((arg) => (arg === 'WORLD' ? file('world.json') : arg === 'BROKEN' ? file('broken.json') : arg === 'BAD_HISTORY' ? file('bad-history.json') : arg));
    const result = cli(...mapped);
    expect(result.status).toBe(2);
    expect(result.stderr.split('\n')[0]).toMatch(message);
    expect(result.stdout).toBe('');
  });

  it('turn runs one turn and prints one JSON object', () => {
    const result = cli(
      'turn',
      file('world.json'),
      '--state',
      file('state.json'),
      '--user',
      'I knock on the gate.',
      '--reply',
      'An arrow grazes you. [hp: -5] [Note: ouch]',
      '--seed',
      '3',
      '--now',
      '2026-02-02T10:00:00Z',
      '--session',
      'abc',
    );
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout) as Record<string, unknown> & { state: { variables: Record<string, unknown>; turnCount: number } };
    expect(output.state.variables).toEqual({ hp: 7, 'has-key': false });
    expect(output.state.turnCount).toBe(1);
    expect(output.displayText).toBe('An arrow grazes you. [Note: ouch]');
    expect(output.stateChanges).toMatchObject([{ variableId: 'hp', oldValue: 12, newValue: 7 }]);
    expect(output.firedRules).toMatchObject([{ ruleId: 'hurt' }]);
    expect(output.notifications).toMatchObject([{ style: 'warning', message: 'Careful, User!' }]);
    for (const key of ['audioCommands', 'pendingContext', 'skippedEntries']) expect(Array.isArray(output[key])).toBe(true);
  });

  it('prompt prints the assembled provider messages as JSON', () => {
    const result = cli('prompt', file('world.json'), '--history', file('history.json'), '--user', 'Open the gate!', '--now', '2026-02-02T10:00:00Z');
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout) as { messages: { role: string; content: string; step: number }[]; cacheBreakpointIndex: number };
    expect(output.messages[0]).toMatchObject({ role: 'system', content: 'You are CLI Keep, keeper of the gate. User approaches.', step: 1 });
    expect(output.messages.map((message) => message.content)).toContain('The gate opens only for those with a key.');
    expect(output.messages.at(-1)).toMatchObject({ step: 12, role: 'system' });
    expect(output.messages.filter((message) => message.step === 10).map((message) => message.content)).toEqual(['Hello.', 'Who goes there?', 'Open the gate!']);
    expect(output.cacheBreakpointIndex).toBeGreaterThanOrEqual(0);
    // which entries went in, and why
    const fired = (output as unknown as { firedEntries: { entryId: string; via: string }[] }).firedEntries;
    expect(fired.length).toBeGreaterThan(0);
    for (const entry of fired) expect(['always', 'keyword', 'conditions', 'recursion']).toContain(entry.via);
  });

  it('validate prints warnings too: stripped fields, unused variables, orphaned references; a greeting is not "never sent"', () => {
    const noisy = {
      ...world,
      mood: 'grim',
      entries: [
        ...world.entries,
        { id: 'hello', name: 'Hello', content: 'Halt, {{user}}!', role: 'greeting', section: 'chat-history', keywords: [] },
      ],
      variables: [...world.variables, { id: 'unused_score', name: 'Score', type: 'number', defaultValue: 0 }],
      rules: [
        ...world.rules,
        { id: 'lift fog', name: 'Lift fog', trigger: { type: 'keyword', keywords: ['sun'] }, actions: [{ type: 'remove-directive', directiveId: 'fog' }] },
      ],
    };
    writeFileSync(file('noisy.json'), JSON.stringify(noisy));
    const result = cli('validate', file('noisy.json'));
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      'valid',
      'warning mood: is not a field of WorldDefinition 20.0.0 and was removed',
      'warning variables[1].id: variable "has-key" is read by no entry, condition, rule, reaction, music or interface file; only the AI sees it',
      'warning variables[2].id: variable "unused_score" is read by no entry, condition, rule, reaction, music or interface file; only the AI sees it',
      'warning rules[1].actions[0].directiveId: directive "fog" is removed here but no rule or reaction injects it',
    ]);
  });

  it('action fires an action trigger on a state and prints the dispatch result', () => {
    const shop = {
      ...world,
      rules: [
        ...world.rules,
        {
          id: 'heal',
          name: 'Heal',
          trigger: { type: 'action', actionId: 'drink-potion' },
          actions: [{ type: 'modify-variable', variableId: 'hp', operation: 'add', value: 5 }],
        },
      ],
    };
    writeFileSync(file('shop.json'), JSON.stringify(shop));
    const result = cli('action', file('shop.json'), 'drink-potion', '--state', file('state.json'), '--now', '2026-02-02T10:00:00Z');
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout) as { state: { variables: Record<string, unknown> }; firedRules: { ruleId: string }[]; stateChanges: unknown[] };
    expect(output.state.variables.hp).toBe(17);
    expect(output.firedRules.map((rule) => rule.ruleId)).toEqual(['heal']);
    expect(output.stateChanges).toEqual([{ variableId: 'hp', oldValue: 12, newValue: 17, source: 'rule:heal' }]);
    expect(cli('action', file('shop.json')).stderr).toMatch(/action needs a world file and an action id/);
  });

  it('prompt on a fresh state opens with the greeting and applies session-start effects', () => {
    const greeted = {
      ...world,
      entries: [...world.entries, { id: 'hello', name: 'Hello', content: 'Halt, {{user}}!', role: 'greeting', section: 'chat-history', keywords: [] }],
      rules: [
        ...world.rules,
        {
          id: 'opening',
          name: 'Opening',
          trigger: { type: 'session-start' },
          actions: [{ type: 'inject-directive', directiveId: 'mood', content: 'It is raining.', position: 'auto', persistent: true }],
        },
      ],
    };
    writeFileSync(file('greeted.json'), JSON.stringify(greeted));
    const result = cli('prompt', file('greeted.json'), '--user', 'Let me in.', '--now', '2026-02-02T10:00:00Z');
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout) as { messages: { role: string; content: string; step: number }[] };
    expect(output.messages.filter((message) => message.step === 10).map((message) => [message.role, message.content])).toEqual([
      ['assistant', 'Halt, User!'],
      ['user', 'Let me in.'],
    ]);
    expect(output.messages.map((message) => message.content)).toContain('It is raining.');
  });

  it('turn lists only real state changes (a clamped or same-value change is not one)', () => {
    const result = cli('turn', file('world.json'), '--user', 'I rest.', '--reply', 'You feel fine. [hp: +5] [has-key: set false]', '--now', '2026-02-02T10:00:00Z');
    expect(result.status).toBe(0);
    const output = JSON.parse(result.stdout) as { stateChanges: unknown[]; state: { variables: Record<string, unknown> } };
    expect(output.state.variables).toEqual({ hp: 20, 'has-key': false });
    expect(output.stateChanges).toEqual([]);
  });

  it('turn with an invalid world prints the issues and exits 1', () => {
    const result = cli('turn', file('invalid.json'), '--user', 'a', '--reply', 'b');
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^invalid:/);
  });
});
