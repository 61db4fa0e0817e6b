/**
 * Issue 31 point 3: SillyTavern's meaning is kept, and what cannot be kept is said. Fixtures are
 * written here in SillyTavern's shapes (a V2 card with an embedded book, a World Info file).
 */
import { describe, expect, it } from 'vitest';
import { assemblePrompt } from '../engine/prompt.ts';
import { startSession } from '../engine/turn.ts';
import { reportLines } from './import-report.ts';
import { type ImportResult, importWorld } from './import-world.ts';

const NOW = '2026-01-01T00:00:00Z';
const options = { generateId: () => '11111111-1111-4111-8111-111111111111', now: () => new Date(NOW) };
function imported(input: unknown): Extract<ImportResult, { ok: true }> {
  const result = importWorld(input, options);
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.issues)}`);
  return result;
}

/** A V2 card as SillyTavern exports it: the book's entries carry SillyTavern's details under extensions. */
function card(entries: Record<string, unknown>[], data: Record<string, unknown> = {}) {
  return {
    spec: 'chara_card_v2',
    spec_version: '2.0',
    data: {
      name: 'Mira',
      description: 'DESCRIPTION of {{char}}.',
      personality: 'calm',
      scenario: 'A lighthouse.',
      first_mes: 'Welcome.',
      mes_example: '<START>\n{{user}}: hi\n{{char}}: EXAMPLE reply',
      system_prompt: 'SYSTEM prompt.',
      creator_notes: '',
      post_history_instructions: '',
      alternate_greetings: [],
      tags: [],
      creator: '',
      character_version: '',
      extensions: { talkativeness: '0.5', fav: false, world: 'Mira lore', depth_prompt: { prompt: '', depth: 4, role: 'system' } },
      character_book: {
        name: 'Mira lore',
        entries: entries.map((entry, index) => ({
          id: index,
          keys: [],
          secondary_keys: [],
          comment: '',
          content: '',
          constant: false,
          selective: true,
          insertion_order: 100,
          enabled: true,
          position: 'before_char',
          use_regex: true,
          extensions: { position: 0, exclude_recursion: false, display_index: index, probability: 100, useProbability: true, depth: 4, selectiveLogic: 0, group: '', group_override: false, group_weight: 100, prevent_recursion: false, delay_until_recursion: false, scan_depth: null, match_whole_words: null, use_group_scoring: false, case_sensitive: null, automation_id: '', role: 0, vectorized: false, sticky: 0, cooldown: 0, delay: 0 },
          ...entry,
        })),
      },
      ...data,
    },
  };
}
const at = (position: number, extra: Record<string, unknown> = {}) => (entry: Record<string, unknown>) => ({ ...entry, extensions: { ...(card([]).data.character_book.entries[0]?.extensions ?? {}), position, display_index: 0, probability: 100, useProbability: true, depth: 4, selectiveLogic: 0, role: 0, ...extra } });

const contents = (world: Extract<ImportResult, { ok: true }>['world'], history: { role: 'user' | 'assistant'; content: string }[]) =>
  assemblePrompt(world, {}, { history, now: NOW, seed: 1, sessionId: 's' }).messages.map((message) => message.content);

describe('SillyTavern placements', () => {
  it('before/after-character entries keep their place around the description, triggered by their keywords, before the example chat', () => {
    const { world } = imported(
      card([
        at(0)({ keys: ['harbor'], content: 'BEFORE keyword entry', insertion_order: 10 }),
        at(0)({ keys: [], content: 'BEFORE constant entry', constant: true, insertion_order: 5 }),
        at(1)({ keys: ['harbor'], content: 'AFTER keyword entry', insertion_order: 1 }),
        at(1)({ keys: ['storm'], content: 'AFTER untriggered entry', insertion_order: 2 }),
      ]),
    );
    const messages = contents(world, [{ role: 'user', content: 'Take me to the harbor.' }]);
    const order = ['SYSTEM prompt.', 'BEFORE constant entry', 'BEFORE keyword entry', 'DESCRIPTION of Mira.', "Mira's personality: calm", 'Scenario: A lighthouse.', 'AFTER keyword entry', 'EXAMPLE reply'];
    const found = order.map((text) => messages.findIndex((content) => content.includes(text)));
    expect(found.every((index) => index >= 0)).toBe(true);
    expect(found).toEqual([...found].sort((a, b) => a - b));
    expect(messages.some((content) => content.includes('AFTER untriggered entry'))).toBe(false);
    // Without the keyword, only the constant one is sent.
    const quiet = contents(world, [{ role: 'user', content: 'Hello.' }]);
    expect(quiet.filter((content) => content.includes('BEFORE') || content.includes('AFTER'))).toEqual(['BEFORE constant entry']);
  });

  it('at-depth entries keep their depth; a constant one and the character\'s note are injected there from the session\'s start', () => {
    const result = imported(
      card(
        [
          at(4, { depth: 1, role: 1 })({ keys: ['bell'], content: 'KEYWORD AT DEPTH 1' }),
          at(4, { depth: 3 })({ keys: [], content: 'CONSTANT AT DEPTH 3', constant: true }),
        ],
        { extensions: { depth_prompt: { prompt: 'NOTE of <BOT> at depth 2', depth: 2, role: 'system' } } },
      ),
    );
    // SillyTavern's depth N (1 = just before the last message) is this platform's N − 1 (0 = just before it).
    expect(result.world.entries.find((entry) => entry.content === 'KEYWORD AT DEPTH 1')).toMatchObject({ section: 'chat-history', depth: 0, apiRole: 'user' });
    expect(result.world.rules.map((rule) => [rule.id, rule.trigger.type, rule.actions[0]])).toEqual([
      ['lore-1-at-depth', 'session-start', { type: 'inject-directive', directiveId: 'lore-1', content: 'CONSTANT AT DEPTH 3', position: 'depth', depth: 2, persistent: true }],
      ['character-note-at-depth', 'session-start', { type: 'inject-directive', directiveId: 'character-note', content: 'NOTE of {{char}} at depth 2', position: 'depth', depth: 1, persistent: true }],
    ]);
    const { state } = startSession(result.world, { now: NOW, seed: 1, sessionId: 's' });
    const history = [
      { role: 'assistant' as const, content: 'm0' },
      { role: 'user' as const, content: 'm1' },
      { role: 'assistant' as const, content: 'm2' },
      { role: 'user' as const, content: 'm3 bell' },
    ];
    const messages = assemblePrompt(result.world, state, { history, now: NOW, seed: 1, sessionId: 's' }).messages.map((message) => message.content);
    const index = (text: string) => messages.findIndex((content) => content.includes(text));
    // As in SillyTavern: depth 1 just before the last message (m3), 2 before m2, 3 before m1.
    expect(index('KEYWORD AT DEPTH 1')).toBe(index('m3 bell') - 1);
    expect(index('NOTE of Mira at depth 2')).toBe(index('m2') - 1);
    expect(index('CONSTANT AT DEPTH 3')).toBe(index('m1') - 1);
  });
});

describe('what SillyTavern text means here', () => {
  it('<USER>/<BOT> are replaced in lorebook entries as in card fields', () => {
    const result = imported(card([at(4)({ keys: ['x'], content: '<BOT> bows to <USER>.' })]));
    expect(result.world.entries.find((entry) => entry.id === 'lore-0')?.content).toBe('{{char}} bows to {{user}}.');
    expect(reportLines(result.report)).toContain('converted data.character_book.entries[0].content: <USER>/<BOT> → {{user}}/{{char}}');
    const lone = imported({ entries: { 7: { uid: 7, key: ['y'], content: 'Ask <USER>.', order: 1, position: 4 } } });
    expect(lone.world.entries[0]?.content).toBe('Ask {{user}}.');
  });

  it('a lorebook alone says what {{char}} becomes', () => {
    const result = importWorld({ name: 'Harbor Lore', entries: { 0: { uid: 0, key: ['a'], content: '{{char}} knows the tides.' }, 1: { uid: 1, key: ['b'], content: 'plain' } } }, options);
    expect(result.ok && result.report.warnings).toEqual([
      { path: 'entries', message: 'a lorebook has no character: {{char}} in 1 entry becomes the world\'s name, "Harbor Lore" (rename the world, or add a character entry and name it there)' },
    ]);
  });

  it('EJS, helper macros and regex scripts each get one warning naming the consequence', () => {
    const result = imported(
      card([at(4)({ keys: ['a'], content: '<% if (x) { %>secret<% } %>' }), at(4)({ keys: ['b'], content: '{{setvar::mood::happy}} {{getvar::mood}} {{random::a::b}}' })], {
        system_prompt: 'Always end with a status block. <%= stat %>',
        extensions: { regex_scripts: [{ scriptName: 'Hide status', findRegex: '/<status>[\\s\\S]*?<\\/status>/g', replaceString: '' }, { scriptName: 'Trim', findRegex: '/x/' }] },
      }),
    );
    expect(result.report.warnings.map((warning) => `${warning.path}: ${warning.message}`)).toEqual([
      'data.extensions.regex_scripts: 2 regex scripts ("Hide status", "Trim") are not run here: text they hid or rewrote in replies stays visible, so where the card tells the model to write update or status blocks, no script will hide them',
      'entries: 2 texts (system-prompt, lore-0) use EJS templates (<% … %>) of a SillyTavern extension, which this platform does not run: the model reads the template code as it is written',
      'entries: helper macros {{setvar::…}}, {{getvar::…}} in 1 text (lore-1) are not macros here: they stay in the prompt as literal text and set or read nothing (use this world\'s variables and directives instead)',
    ]);
    // The card's own SillyTavern defaults (talkativeness, fav, the book's source world, an empty note, entry defaults) are not losses.
    expect(reportLines(result.report).filter((line) => line.startsWith('dropped'))).toEqual([]);
  });

  it("SillyTavern's defaults are not reported as dropped; repeated per-entry lines fold into one counted line", () => {
    const entries = Object.fromEntries(
      Array.from({ length: 34 }, (_, uid) => [
        String(uid),
        { uid, key: [`k${uid}`], content: `c${uid}`, order: 100, position: 4, depth: 4, probability: 100, useProbability: true, group: 'weather', groupWeight: 100, addMemo: true, caseSensitive: null, vectorized: false, role: 0 },
      ]),
    );
    const result = imported({ name: 'Weather', entries });
    expect(reportLines(result.report)).toEqual([
      'import: sillytavern-world-info world-info → WorldDefinition 20.0.0',
      'dropped entries[*].group (34×): SillyTavern\'s "group" has no counterpart in a world here',
      'defaulted id: a lorebook has no world id; 11111111-1111-4111-8111-111111111111',
    ]);
  });
});
