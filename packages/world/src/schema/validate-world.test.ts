import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { EngineWorld } from '../engine/index.ts';
import {
  checkWorldVersion,
  lintWorld,
  parseWorld,
  RULE_ACTION_TYPES,
  RULE_TRIGGER_TYPES,
  validateWorld,
  WORLD_SCHEMA_VERSION,
  type WorldDefinition,
  WorldValidationError,
} from './index.ts';

const packageRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const samplesDir = join(packageRoot, 'samples');
const fixturesDir = join(packageRoot, 'fixtures', 'invalid');

function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function valid(input: unknown): { world: WorldDefinition; warnings: { path: string; message: string }[] } {
  const result = validateWorld(input);
  if (!result.ok) throw new Error(`expected a valid world, got ${JSON.stringify(result.issues)}`);
  return result;
}

function issuesOf(input: unknown): { path: string; message: string }[] {
  const result = validateWorld(input);
  if (result.ok) throw new Error('expected the world to be refused');
  return result.issues;
}

function minimalWorld(): Record<string, unknown> {
  return { version: '20.0.0', name: 'Tiny' };
}

interface InvalidFixture {
  description: string;
  world: unknown;
  expectedIssues: { path: string; messageIncludes: string }[];
}

const fixtureFiles = readdirSync(fixturesDir)
  .filter((file) => file.endsWith('.json'))
  .sort();

describe('invalid world fixtures', () => {
  it('has at least 30 fixtures', () => {
    expect(fixtureFiles.length).toBeGreaterThanOrEqual(30);
  });

  it.each(fixtureFiles)('%s reports exactly its expected issue paths', (file) => {
    const fixture = readJson(join(fixturesDir, file)) as InvalidFixture;
    const issues = issuesOf(fixture.world);
    const actualPaths = [...new Set(issues.map((issue) => issue.path))].sort();
    const expectedPaths = [...new Set(fixture.expectedIssues.map((issue) => issue.path))].sort();
    expect(actualPaths).toEqual(expectedPaths);
    for (const expected of fixture.expectedIssues) {
      const atPath = issues.filter((issue) => issue.path === expected.path).map((issue) => issue.message);
      expect(atPath.some((message) => message.includes(expected.messageIncludes)), `${expected.path}: ${JSON.stringify(atPath)}`).toBe(true);
    }
    for (const issue of issues) {
      expect(issue.message.length).toBeGreaterThan(5);
      expect(issue.message).not.toMatch(/^Invalid input|^Too (small|big)/);
    }
  });
});

const sampleFiles = readdirSync(samplesDir)
  .filter((file) => file.endsWith('.json'))
  .sort();

describe('sample worlds', () => {
  it('ships the three samples', () => {
    expect(sampleFiles).toEqual(['ashen-depths.json', 'changan-nights.json', 'willow-street.json']);
  });

  it.each(sampleFiles)('%s validates without warnings and round-trips byte for byte', (file) => {
    const text = readFileSync(join(samplesDir, file), 'utf8');
    const raw = JSON.parse(text) as unknown;
    const { world, warnings } = valid(raw);
    expect(warnings).toEqual([]);
    expect(world).toEqual(raw);
    expect(`${JSON.stringify(world, null, 2)}\n`).toBe(text);
    expect(valid(JSON.parse(JSON.stringify(world))).world).toEqual(world);
  });

  it('between them use every rule trigger and every action type', () => {
    const worlds = sampleFiles.map((file) => valid(readJson(join(samplesDir, file))).world);
    const triggers = new Set(worlds.flatMap((world) => world.rules.map((rule) => rule.trigger.type)));
    const actions = new Set(worlds.flatMap((world) => world.rules.flatMap((rule) => rule.actions.map((action) => action.type))));
    expect([...triggers].sort()).toEqual([...RULE_TRIGGER_TYPES].sort());
    expect([...actions].sort()).toEqual([...RULE_ACTION_TYPES].sort());
  });

  it('the dungeon has bounded numbers, a JSON inventory, cooldowns, music and a custom interface', () => {
    const { world } = valid(readJson(join(samplesDir, 'ashen-depths.json')));
    const hp = world.variables.find((variable) => variable.id === 'hp');
    expect(hp).toMatchObject({ type: 'number', min: 0, max: 100 });
    expect(world.variables.find((variable) => variable.id === 'inventory')?.type).toBe('json');
    expect(new Set(world.variables.map((variable) => variable.type))).toEqual(new Set(['number', 'string', 'boolean', 'json']));
    expect(world.rules.some((rule) => (rule.cooldownTurns ?? 0) > 0)).toBe(true);
    expect(world.bgmPlaylist?.tracks.length).toBeGreaterThan(1);
    expect(world.conditionalBGM.length).toBeGreaterThan(1);
    expect(world.rootComponent?.files[world.rootComponent.entryFile]).toContain('export default function');
    expect(new Set(world.entries.map((entry) => entry.section))).toEqual(new Set(['system-presets', 'examples', 'chat-history', 'post-history']));
  });

  it('the relationship story has reactions and conditional entries', () => {
    const { world } = valid(readJson(join(samplesDir, 'willow-street.json')));
    expect(world.reactions?.length).toBeGreaterThan(3);
    expect(world.reactions?.some((reaction) => reaction.when.eventType.startsWith('spatial:'))).toBe(true);
    expect(world.entries.filter((entry) => entry.conditions.length > 0).length).toBeGreaterThan(1);
    expect(world.customUI.length).toBe(1);
  });

  it('the Chinese world is written in Chinese and has no reactions list', () => {
    const raw = readJson(join(samplesDir, 'changan-nights.json')) as Record<string, unknown>;
    const { world } = valid(raw);
    expect(world.language).toBe('zh-Hans');
    expect('reactions' in raw).toBe(false);
    expect(world.reactions).toBeUndefined();
    expect(world.entries.every((entry) => /[\u4e00-\u9fff]/.test(entry.content))).toBe(true);
  });

  it('a validated world is what the engine reads', () => {
    const { world } = valid(readJson(join(samplesDir, 'ashen-depths.json')));
    const engineWorld: EngineWorld = world;
    expect(engineWorld.entries.length).toBe(world.entries.length);
  });
});

describe('defaults', () => {
  it('fills the settings defaults of seed 002 §2.2 and §8, the sampling ones included (topK and minP have none)', () => {
    const { world } = valid(minimalWorld());
    expect(world.settings).toEqual({
      maxTokens: 12000,
      maxContext: 200000,
      temperature: 1,
      topP: 1,
      frequencyPenalty: 0,
      presencePenalty: 0,
      playerName: 'User',
      lorebookScanDepth: 2,
      lorebookRecursionDepth: 0,
      structuredOutput: false,
    });
    expect(world).toMatchObject({
      description: '',
      author: '',
      entries: [],
      variables: [],
      rules: [],
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
    });
    for (const key of ['topK', 'minP']) expect(key in world.settings, key).toBe(false);
  });

  it('a rule action may reach inside a json variable (docs/WORLDS.md: `id.path`), not inside a number', () => {
    const rule = (variableId: string) => ({
      id: 'use',
      name: 'Use',
      trigger: { type: 'action', actionId: 'use' },
      actions: [{ type: 'modify-variable', variableId, operation: 'delete', value: 'potion' }],
    });
    const variables = [
      { id: 'bag', name: 'Bag', type: 'json', defaultValue: { items: ['potion'] } },
      { id: 'hp', name: 'HP', type: 'number', defaultValue: 1 },
    ];
    expect(valid({ ...minimalWorld(), variables, rules: [rule('bag.items')] }).world.rules[0]!.actions[0]).toMatchObject({ variableId: 'bag.items' });
    expect(issuesOf({ ...minimalWorld(), variables, rules: [rule('hp.x')] }).map((i) => i.message)).toEqual([expect.stringContaining('only json variables have inner paths')]);
    expect(issuesOf({ ...minimalWorld(), variables, rules: [rule('nope.items')] }).map((i) => i.message)).toEqual([expect.stringContaining('names variable "nope"')]);
  });

  it('keeps given settings and fills only the missing ones', () => {
    const { world } = valid({ ...minimalWorld(), settings: { temperature: 0, topK: 0, minP: 1, playerName: '' } });
    expect(world.settings).toMatchObject({ temperature: 0, topK: 0, minP: 1, playerName: '', maxTokens: 12000, lorebookScanDepth: 2 });
  });

  it('fills entry, rule, track, playlist and conditional music defaults', () => {
    const { world } = valid({
      ...minimalWorld(),
      variables: [{ id: 'hp', name: 'HP', type: 'number', defaultValue: 1 }],
      entries: [{ id: 'a', name: 'A', content: 'x', section: 'chat-history', keywords: ['a'] }],
      rules: [{ id: 'r', name: 'R', trigger: { type: 'every-turn' }, actions: [{ type: 'inject-directive', directiveId: 'd', content: 'c' }] }],
      audioTracks: [{ id: 't', name: 'T', type: 'bgm', url: 'asset://t.ogg' }],
      bgmPlaylist: { tracks: ['t'] },
      conditionalBGM: [{ id: 'c', name: 'C', targetTrackId: 't', triggerType: 'session-start' }],
    });
    expect(world.entries[0]).toEqual({
      id: 'a',
      name: 'A',
      content: 'x',
      role: 'custom',
      apiRole: 'system',
      section: 'chat-history',
      position: 0,
      enabled: true,
      keywords: ['a'],
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
    expect(world.variables[0]).toEqual({ id: 'hp', name: 'HP', type: 'number', defaultValue: 1, description: '', behaviorRules: '' });
    expect(world.rules[0]).toMatchObject({ description: '', conditions: [], conditionLogic: 'all', priority: 0, enabled: true, cooldownTurns: null, maxFireCount: null });
    expect(world.rules[0]?.actions[0]).toEqual({ type: 'inject-directive', directiveId: 'd', content: 'c', position: 'auto', persistent: false });
    expect(world.audioTracks[0]).toEqual({ id: 't', name: 'T', type: 'bgm', url: 'asset://t.ogg', loop: false, volume: 1, fadeIn: null, fadeOut: null, maxDuration: null });
    expect(world.bgmPlaylist).toEqual({ tracks: ['t'], playMode: 'loop', gapSeconds: 0, autoPlay: true, waitForFirstMessage: false });
    expect(world.conditionalBGM[0]).toMatchObject({ conditionLogic: 'all', priority: 0, stopPreviousBGM: false, fallback: 'default', keywords: [] });
  });

  it('accepts the bounds themselves', () => {
    const { world } = valid({
      ...minimalWorld(),
      name: 'n'.repeat(200),
      description: 'd'.repeat(10000),
      settings: { temperature: 2, minP: 0, topK: 0 },
      audioTracks: [{ id: 't', name: 'T', type: 'sfx', url: 'https://example.com/t.ogg', volume: 0 }],
      bgmPlaylist: { tracks: ['t'], playMode: 'shuffle', gapSeconds: 30 },
    });
    expect(world.settings.temperature).toBe(2);
    expect(world.bgmPlaylist?.gapSeconds).toBe(30);
  });
});

describe('compatibility', () => {
  it('strips a variable category silently', () => {
    const { world, warnings } = valid({ ...minimalWorld(), variables: [{ id: 'hp', name: 'HP', type: 'number', defaultValue: 5, category: 'stat' }] });
    expect('category' in (world.variables[0] ?? {})).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('removes other unknown fields and names each one in a warning', () => {
    const { world, warnings } = valid({ ...minimalWorld(), mood: 'x', entries: [{ id: 'a', name: 'A', content: 'x', section: 'examples', colour: 'red' }] });
    expect('mood' in world).toBe(false);
    expect(warnings.map((warning) => warning.path).sort()).toEqual(['entries[0].colour', 'mood']);
  });

  it('leaves an absent reactions list absent and language optional', () => {
    const { world } = valid(minimalWorld());
    expect('reactions' in world).toBe(false);
    expect('language' in world).toBe(false);
    expect(valid({ ...minimalWorld(), reactions: [] }).world.reactions).toEqual([]);
  });

  it('accepts legacy customUI beside rootComponent, warning that rootComponent is used', () => {
    const rootComponent = { id: '0f8fad5b-d9cb-469f-a165-70867728950e', name: 'UI', entryFile: 'index.tsx', files: { 'index.tsx': 'export default () => <Chat />;' }, updatedAt: 1700000000000 };
    const { world, warnings } = valid({ ...minimalWorld(), rootComponent, customUI: [{ kind: 'panel', html: '<b>hp</b>' }] });
    expect(world.customUI).toEqual([{ kind: 'panel', html: '<b>hp</b>' }]);
    expect(warnings.map((warning) => warning.path)).toContain('customUI');
  });

  it('keeps unknown fields of folders, components, custom UI and rootComponent byte for byte', () => {
    const input = {
      ...minimalWorld(),
      rootComponent: { zeta: { nested: [1, { b: 2, a: 1 }] }, id: '0f8fad5b-d9cb-469f-a165-70867728950e', files: { 'b.tsx': 'b', 'index.tsx': 'i' }, name: 'UI', entryFile: 'index.tsx', updatedAt: '2026-01-01T00:00:00.000Z', theme: 'dark' },
      components: [{ layout: { w: 2, h: 1 }, id: 'hp-bar', kind: 'stat-bar' }],
      customUI: [{ html: '<i>x</i>', z: 1, a: 2 }],
      entryFolders: [{ sortKey: 3, id: 'f', name: 'F', parentId: null }],
    };
    const { world } = valid(input);
    for (const key of ['rootComponent', 'components', 'customUI', 'entryFolders'] as const) {
      expect(JSON.stringify(world[key])).toBe(JSON.stringify(input[key]));
    }
  });

  it('does not change its input', () => {
    const input = { ...minimalWorld(), variables: [{ id: 'hp', name: 'HP', type: 'number', defaultValue: 5, category: 'stat' }] };
    const before = JSON.stringify(input);
    valid(input);
    issuesOf({ ...input, name: '' });
    expect(JSON.stringify(input)).toBe(before);
  });
});

describe('references and ids', () => {
  it('refuses each reserved variable id with the reason', () => {
    for (const id of ['audio', 'user', 'char', 'time', 'date']) {
      const issues = issuesOf({ ...minimalWorld(), variables: [{ id, name: id, type: 'string', defaultValue: '' }] });
      expect(issues).toHaveLength(1);
      expect(issues[0]?.path).toBe('variables[0].id');
      expect(issues[0]?.message).toContain(`{{${id}}} would shadow the built-in macro`);
    }
  });

  it('accepts a condition that reaches into a json variable', () => {
    const { warnings } = valid({
      ...minimalWorld(),
      variables: [{ id: 'bag', name: 'Bag', type: 'json', defaultValue: { items: [] } }],
      entries: [{ id: 'a', name: 'A', content: 'x', section: 'chat-history', conditions: [{ variableId: 'bag.items', operator: 'contains', value: 'key' }] }],
    });
    expect(warnings).toEqual([]);
  });

  it('warns about a manual rule that nothing fires and a chat-history entry that can never be sent', () => {
    const { warnings } = valid({
      ...minimalWorld(),
      entries: [{ id: 'a', name: 'A', content: 'x', section: 'chat-history' }],
      rules: [{ id: 'lonely', name: 'Lonely', trigger: { type: 'manual' }, actions: [{ type: 'notify-player', message: 'hi' }] }],
    });
    expect(warnings.map((warning) => warning.path).sort()).toEqual(['entries[0].keywords', 'rules[0].trigger']);
  });

  it('warns about empty keywords and a response budget larger than the context', () => {
    const { warnings } = valid({
      ...minimalWorld(),
      entries: [{ id: 'a', name: 'A', content: 'x', section: 'chat-history', keywords: ['cave', ' '], secondaryKeywords: [''] }],
      settings: { maxTokens: 9000, maxContext: 8000 },
    });
    expect(warnings.map((warning) => warning.path).sort()).toEqual(['entries[0].keywords[1]', 'entries[0].secondaryKeywords[0]', 'settings.maxTokens']);
  });

  it('reports structure and reference issues together, in one answer', () => {
    const issues = issuesOf({ ...minimalWorld(), name: 5, rules: [{ id: 'r', name: 'R', trigger: { type: 'state-change', variableId: 'ghost' }, actions: [] }] });
    expect(issues.map((issue) => issue.path)).toEqual(['name', 'rules[0].trigger.variableId']);
  });

  it('names a missing or unknown trigger and action type plainly', () => {
    const issues = issuesOf({ ...minimalWorld(), rules: [{ id: 'r', name: 'R', trigger: {}, actions: [{ type: 'dance' }] }] });
    expect(issues).toEqual([
      { path: 'rules[0].trigger.type', message: expect.stringMatching(/^is required: one of "variable-crossed"/) },
      { path: 'rules[0].actions[0].type', message: expect.stringMatching(/, not the text "dance"$/) },
    ]);
  });
});

describe('versions', () => {
  it('reads only the current version', () => {
    expect(WORLD_SCHEMA_VERSION).toBe('20.0.0');
    expect(checkWorldVersion('20.0.0')).toEqual({ status: 'current' });
    expect(checkWorldVersion('19.9.9').status).toBe('older');
    expect(checkWorldVersion('3.0.0').status).toBe('older');
    expect(checkWorldVersion('20.0.1').status).toBe('newer');
    expect(checkWorldVersion('20.1.0').status).toBe('newer');
    expect(checkWorldVersion(undefined).status).toBe('missing');
    expect(checkWorldVersion('v20').status).toBe('unrecognised');
    expect(checkWorldVersion(20).status).toBe('unrecognised');
  });

  it('explains an older version instead of accepting it', () => {
    const issues = issuesOf({ ...minimalWorld(), version: '19.0.0' });
    expect(issues).toEqual([{ path: 'version', message: expect.stringContaining('19.0.0 is an older WorldDefinition format') }]);
    expect(issues[0]?.message).toContain('20.0.0');
  });
});

describe('parseWorld', () => {
  it('returns the world or throws a WorldValidationError with every issue', () => {
    expect(parseWorld(minimalWorld()).name).toBe('Tiny');
    try {
      parseWorld({ version: '20.0.0', name: '', settings: { temperature: 9 } });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WorldValidationError);
      expect((error as WorldValidationError).code).toBe('WORLD_INVALID');
      expect((error as WorldValidationError).issues.map((issue) => issue.path)).toEqual(['name', 'settings.temperature']);
    }
  });
});

describe('author hints', () => {
  it('a variable named "choices" is reported: it takes over the [choices: …] directive', () => {
    const variable = { id: 'choices', name: 'Choices', type: 'string', defaultValue: '', description: '', behaviorRules: '' };
    const hints = lintWorld(parseWorld({ ...minimalWorld(), variables: [variable] }));
    expect(hints).toContainEqual({ path: 'variables[0].id', message: expect.stringContaining('cannot offer the player choices') });
    expect(lintWorld(parseWorld(minimalWorld())).some((h) => h.message.includes('choices'))).toBe(false);
  });
});
