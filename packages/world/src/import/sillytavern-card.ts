import type { PathSegment } from '../schema/issue-path.ts';
import type { ImportAsset, ImportMedia, ReportBuilder } from './import-report.ts';
import { decodeBase64 } from './png-text.ts';
import { convertLorebook, type DepthInjection, depthRules, placeholders } from './world-info.ts';

/**
 * SillyTavern character cards (V1, V2 `chara_card_v2`, V3 `chara_card_v3`) → a world with the
 * character as system-preset entries, the greeting(s) as greeting entries, the example messages
 * as an examples entry and the embedded lorebook as chat-history entries. `{{char}}` is the
 * world's name, which is the character's name.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function isCard(input: Json): boolean {
  if (input.spec === 'chara_card_v2' || input.spec === 'chara_card_v3') return true;
  return !('version' in input) && typeof input.name === 'string' && ('first_mes' in input || 'mes_example' in input || 'char_persona' in input);
}

/** Fields of the card's `data` the converter reads; any other with a value is reported as dropped. */
const READ = new Set([
  'name', 'description', 'personality', 'scenario', 'first_mes', 'mes_example', 'creator_notes', 'system_prompt', 'post_history_instructions',
  'alternate_greetings', 'character_book', 'tags', 'creator', 'assets', 'group_only_greetings', 'extensions',
]);

function meaningful(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return true;
}

/** Card extensions SillyTavern writes with these values by default: nothing is lost when they are not kept. */
function atExtensionDefault(key: string, value: unknown): boolean {
  if (!meaningful(value)) return true;
  if (key === 'talkativeness') return value === '0.5' || value === 0.5;
  // The name of the World Info file the embedded character_book came from.
  if (key === 'world') return true;
  if (key === 'depth_prompt') return isObject(value) && text(value.prompt).trim() === '';
  return false;
}

/**
 * Lorebook entries SillyTavern places before or after the character's description keep that
 * place: positions just before the character entry (or the system prompt's end) and just after the
 * last character preset (description, personality, scenario), in their insertion order.
 */
function placeAroundCharacter(presets: Json[], lore: Json[], placements: Map<Json, 'before-char' | 'after-char'>): void {
  const system = presets.filter((entry) => entry.section === 'system-presets');
  const character = system.find((entry) => entry.id === 'character');
  const last = [...system].reverse().find((entry) => ['character', 'personality', 'scenario'].includes(String(entry.id)));
  const before = character ? (character.position as number) : system.length > 0 ? (system[0]!.position as number) : 0;
  const after = last ? (last.position as number) : system.length > 0 ? (system.at(-1)!.position as number) : 0;
  for (const side of ['before-char', 'after-char'] as const) {
    const placed = lore.filter((entry) => placements.get(entry) === side).sort((a, b) => (a.position as number) - (b.position as number));
    placed.forEach((entry, rank) => {
      const fraction = (rank + 1) / (placed.length + 1);
      entry.position = side === 'before-char' ? before - 1 + fraction : after + fraction;
    });
  }
}

/**
 * Text that means something only with a SillyTavern extension: EJS templates (`<% … %>`, the
 * prompt-template extension) and helper macros with arguments that this platform does not have
 * (`{{setvar::…}}`, `{{getvar::…}}`, …). One warning each, naming the consequence.
 */
const OWN_MACROS = new Set(['random', 'pick', 'roll']);
function warnAboutExtensionSyntax(entries: Json[], injections: DepthInjection[], report: ReportBuilder): void {
  const texts = [...entries.map((entry) => ({ id: String(entry.id), content: String(entry.content) })), ...injections.map((item) => ({ id: item.id, content: item.content }))];
  const ejs = texts.filter((item) => /<%[\s\S]*?%>/.test(item.content));
  if (ejs.length > 0) {
    report.warn('entries', `${ejs.length} text${ejs.length === 1 ? '' : 's'} (${ejs.slice(0, 5).map((item) => item.id).join(', ')}${ejs.length > 5 ? ', …' : ''}) use EJS templates (<% … %>) of a SillyTavern extension, which this platform does not run: the model reads the template code as it is written`);
  }
  const helpers = new Map<string, string[]>();
  for (const item of texts) {
    for (const match of item.content.matchAll(/\{\{\s*([A-Za-z_][\w-]*)\s*::/g)) {
      const macro = match[1]!.toLowerCase();
      if (OWN_MACROS.has(macro)) continue;
      const ids = helpers.get(macro) ?? [];
      if (!ids.includes(item.id)) ids.push(item.id);
      helpers.set(macro, ids);
    }
  }
  if (helpers.size > 0) {
    const ids = [...new Set([...helpers.values()].flat())];
    report.warn(
      'entries',
      `helper macros ${[...helpers.keys()].map((macro) => `{{${macro}::…}}`).join(', ')} in ${ids.length} text${ids.length === 1 ? '' : 's'} (${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', …' : ''}) are not macros here: they stay in the prompt as literal text and set or read nothing (use this world's variables and directives instead)`,
    );
  }
}

export interface ConvertedCard {
  world: Json;
  assets: ImportAsset[];
  media: ImportMedia[];
  sourceVersion: string;
  /** The item each greeting and book entry of the card became (card-source.ts). */
  ids: { greetings: (string | null)[]; book: (string | null)[] };
}

/** A `data:` URI's bytes (base64 or percent-encoded), or null when it is not one. */
function dataUriBytes(uri: string): Uint8Array | null {
  const match = /^data:([^,]*?),/i.exec(uri);
  if (!match) return null;
  const body = uri.slice(match[0].length);
  try {
    if (/;base64$/i.test(match[1] ?? '')) return decodeBase64(body);
    return new TextEncoder().encode(decodeURIComponent(body));
  } catch {
    return null;
  }
}

export function convertCard(input: Json, report: ReportBuilder): ConvertedCard {
  const spec = input.spec === 'chara_card_v2' || input.spec === 'chara_card_v3' ? input.spec : 'chara_card_v1';
  const data = spec === 'chara_card_v1' ? input : isObject(input.data) ? input.data : {};
  const base: PathSegment[] = spec === 'chara_card_v1' ? [] : ['data'];
  const at = (...segments: PathSegment[]) => [...base, ...segments];
  if (spec !== 'chara_card_v1') {
    for (const [field, value] of Object.entries(input)) {
      if (!['spec', 'spec_version', 'data'].includes(field) && meaningful(value)) report.dropped([field], `the card's "${field}" (outside data) repeats the card's main fields for older apps; the main fields were used`);
    }
  }
  const name = text(data.name).trim() || 'Imported character';
  if (!text(data.name).trim()) report.defaulted(at('name'), `the card has no name; "${name}" used`);
  const field = (key: string) => placeholders(text(data[key]), at(key), report);

  const entries: Json[] = [];
  const preset = (id: string, entryName: string, role: string, content: string, section: string, extra: Json = {}) => {
    if (content.trim() === '') return;
    entries.push({ id, name: entryName, content, role, apiRole: 'system', section, position: entries.length, ...extra });
  };
  const personality = field('personality');
  const scenario = field('scenario');
  preset('system-prompt', 'System prompt', 'system', field('system_prompt'), 'system-presets');
  preset('character', name, 'character', field('description'), 'system-presets');
  preset('personality', `${name}'s personality`, 'personality', personality && `${name}'s personality: ${personality}`, 'system-presets');
  preset('scenario', 'Scenario', 'scenario', scenario && `Scenario: ${scenario}`, 'system-presets');
  preset('example-messages', 'Example messages', 'example', field('mes_example'), 'examples');
  preset('post-history-instructions', 'Post-history instructions', 'system', field('post_history_instructions'), 'post-history');
  const greetings = [text(data.first_mes), ...(Array.isArray(data.alternate_greetings) ? data.alternate_greetings.map(text) : [])];
  const greetingIds: (string | null)[] = greetings.map(() => null);
  greetings.forEach((greeting, index) => {
    const content = placeholders(greeting, index === 0 ? at('first_mes') : at('alternate_greetings', index - 1), report);
    if (content.trim() === '') return;
    greetingIds[index] = index === 0 ? 'greeting' : `greeting-${index + 1}`;
    entries.push({
      id: index === 0 ? 'greeting' : `greeting-${index + 1}`,
      name: index === 0 ? 'Greeting' : `Alternate greeting ${index}`,
      content,
      role: 'greeting',
      apiRole: 'assistant',
      section: 'chat-history',
      position: index,
    });
  });
  if (Array.isArray(data.group_only_greetings) && data.group_only_greetings.length > 0) {
    report.dropped(at('group_only_greetings'), 'group chats are not a feature of this platform');
  }
  const settings: Json = {};
  const injections: DepthInjection[] = [];
  let bookIds: (string | null)[] = [];
  const book = isObject(data.character_book) ? data.character_book : null;
  if (book) {
    const lore = convertLorebook(book.entries, at('character_book', 'entries'), report);
    bookIds = lore.ids;
    placeAroundCharacter(entries, lore.entries, lore.placements);
    entries.push(...lore.entries);
    injections.push(...lore.injections);
    for (const [key, value] of Object.entries(book)) {
      if (key === 'entries' || !meaningful(value)) continue;
      if (key === 'scan_depth' && typeof value === 'number' && value >= 0) {
        // SillyTavern counts messages; this platform counts exchanges (a player message and the replies after it).
        settings.lorebookScanDepth = Math.ceil(value / 2);
        report.converted(at('character_book', key), `scan depth ${value} messages → lorebookScanDepth ${Math.ceil(value / 2)} (exchanges)`);
      } else if (key === 'recursive_scanning' && value === true) {
        settings.lorebookRecursionDepth = 3;
        report.converted(at('character_book', key), 'recursive scanning → lorebookRecursionDepth 3');
      } else if (key !== 'name') report.dropped(at('character_book', key), `the lorebook's "${key}" has no counterpart in a world here`);
    }
  }
  const extensions = isObject(data.extensions) ? data.extensions : {};
  // The character's note (an always-sent text at a depth) is kept like a constant lorebook entry at depth.
  const note = isObject(extensions.depth_prompt) ? extensions.depth_prompt : null;
  if (note && text(note.prompt).trim() !== '') {
    const stDepth = typeof note.depth === 'number' ? Math.max(0, Math.floor(note.depth)) : 4;
    // SillyTavern's depth 1 is just before the last message, this platform's 0.
    injections.push({ id: 'character-note', name: `${name}'s note`, content: placeholders(text(note.prompt), at('extensions', 'depth_prompt', 'prompt'), report), depth: Math.max(0, stDepth - 1), enabled: true, order: 0 });
    report.converted(at('extensions', 'depth_prompt'), `the character's note at depth ${stDepth} → rule "character-note-at-depth" injects it there from the session's start${stDepth === 0 ? ' (just before the latest message: depth 0 cannot follow it here)' : ''}${typeof note.role === 'string' && note.role !== 'system' ? `; its role (${note.role}) is sent as system` : ''}`);
  }
  const scripts = Array.isArray(extensions.regex_scripts) ? extensions.regex_scripts.filter(isObject) : [];
  if (scripts.length > 0) {
    const names = scripts.map((script) => text(script.scriptName) || '(unnamed)');
    report.warn(
      at('extensions', 'regex_scripts'),
      `${scripts.length} regex script${scripts.length === 1 ? '' : 's'} (${names.slice(0, 5).map((scriptName) => `"${scriptName}"`).join(', ')}${names.length > 5 ? ', …' : ''}) ${scripts.length === 1 ? 'is' : 'are'} not run here: text they hid or rewrote in replies stays visible, so where the card tells the model to write update or status blocks, no script will hide them`,
    );
  }
  for (const [key, value] of Object.entries(extensions)) {
    if (key === 'depth_prompt' || key === 'regex_scripts' || atExtensionDefault(key, value)) continue;
    report.dropped(at('extensions', key), `the card extension "${key}" has no counterpart in a world here`);
  }
  for (const [key, value] of Object.entries(data)) {
    if (!READ.has(key) && meaningful(value)) report.dropped(at(key), `the card's "${key}" has no counterpart in a world here`);
  }
  warnAboutExtensionSyntax(entries, injections, report);

  // V3 assets: `ccdefault:` is the PNG's own picture; a `data:` URI is kept (stored as an asset of
  // the world when saved); any other URI is a link whose file must be uploaded by hand.
  const assets: ImportAsset[] = [];
  const media: ImportMedia[] = [];
  if (Array.isArray(data.assets)) {
    const names = new Set<string>();
    data.assets.forEach((asset, index) => {
      if (!isObject(asset) || typeof asset.uri !== 'string' || asset.uri === 'ccdefault:') return;
      let assetName = typeof asset.name === 'string' && asset.name ? asset.name : `asset-${index}`;
      if (names.has(assetName)) assetName = `${assetName}-${index}`;
      names.add(assetName);
      const path = `data.assets[${index}]`;
      const bytes = asset.uri.startsWith('data:') ? dataUriBytes(asset.uri) : null;
      if (bytes && bytes.length > 0) {
        const type = typeof asset.type === 'string' ? asset.type : undefined;
        assets.push({ id: assetName, reference: `data: URI (${bytes.length.toLocaleString('en')} bytes${type ? `, ${type}` : ''})`, paths: [path], embedded: 'data' });
        media.push({ id: assetName, embedded: 'data', bytes, ...(type ? { type } : {}) });
      } else if (asset.uri.startsWith('data:')) {
        report.dropped(path, 'a data: URI that could not be decoded');
      } else {
        assets.push({ id: assetName, reference: asset.uri, paths: [path] });
      }
    });
  }

  const tags = Array.isArray(data.tags) ? data.tags.filter((tag): tag is string => typeof tag === 'string' && tag.trim() !== '') : [];
  const creatorNotes = text(data.creator_notes);
  if (creatorNotes.length > 10_000) report.converted(at('creator_notes'), `creator notes cut to 10,000 characters (from ${creatorNotes.length})`);
  return {
    sourceVersion: spec,
    assets,
    media,
    ids: { greetings: greetingIds, book: bookIds },
    world: {
      version: '20.0.0',
      name: name.slice(0, 200),
      description: creatorNotes.slice(0, 10_000),
      author: text(data.creator).slice(0, 200),
      entries,
      ...(injections.length > 0 ? { rules: depthRules(injections) } : {}),
      customTags: [...new Set(tags)],
      ...(Object.keys(settings).length > 0 ? { settings } : {}),
    },
  };
}
