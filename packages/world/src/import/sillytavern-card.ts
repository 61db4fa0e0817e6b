import type { PathSegment } from '../schema/issue-path.ts';
import type { ImportAsset, ImportMedia, ReportBuilder } from './import-report.ts';
import { decodeBase64 } from './png-text.ts';
import { convertLorebook } from './world-info.ts';

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

/** V1's `<USER>` and `<BOT>` placeholders are `{{user}}` and `{{char}}`. */
function placeholders(value: string, path: PathSegment[], report: ReportBuilder): string {
  if (!/<USER>|<BOT>/i.test(value)) return value;
  report.converted(path, '<USER>/<BOT> → {{user}}/{{char}}');
  return value.replace(/<USER>/gi, '{{user}}').replace(/<BOT>/gi, '{{char}}');
}

export interface ConvertedCard {
  world: Json;
  assets: ImportAsset[];
  media: ImportMedia[];
  sourceVersion: string;
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
      if (!['spec', 'spec_version', 'data'].includes(field) && meaningful(value)) report.dropped([field], `the card's "${field}" (outside data) is a copy for old readers; data was read`);
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
  preset('system-prompt', 'System prompt', 'system', field('system_prompt'), 'system-presets');
  preset('character', name, 'character', field('description'), 'system-presets');
  preset('personality', `${name}'s personality`, 'personality', field('personality') && `${name}'s personality: ${field('personality')}`, 'system-presets');
  preset('scenario', 'Scenario', 'scenario', field('scenario') && `Scenario: ${field('scenario')}`, 'system-presets');
  preset('example-messages', 'Example messages', 'example', field('mes_example'), 'examples');
  preset('post-history-instructions', 'Post-history instructions', 'system', field('post_history_instructions'), 'post-history');
  const greetings = [text(data.first_mes), ...(Array.isArray(data.alternate_greetings) ? data.alternate_greetings.map(text) : [])];
  greetings.forEach((greeting, index) => {
    const content = placeholders(greeting, index === 0 ? at('first_mes') : at('alternate_greetings', index - 1), report);
    if (content.trim() === '') return;
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
  const book = isObject(data.character_book) ? data.character_book : null;
  if (book) {
    entries.push(...convertLorebook(book.entries, at('character_book', 'entries'), report));
    for (const [key, value] of Object.entries(book)) {
      if (key !== 'entries' && meaningful(value)) report.dropped(at('character_book', key), `the lorebook's "${key}" has no place in WorldDefinition 20.0.0`);
    }
  }
  if (isObject(data.extensions)) {
    for (const [key, value] of Object.entries(data.extensions)) {
      if (meaningful(value)) report.dropped(at('extensions', key), `the card extension "${key}" has no place in WorldDefinition 20.0.0`);
    }
  }
  for (const [key, value] of Object.entries(data)) {
    if (!READ.has(key) && meaningful(value)) report.dropped(at(key), `the card's "${key}" has no place in WorldDefinition 20.0.0`);
  }

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
    world: {
      version: '20.0.0',
      name: name.slice(0, 200),
      description: creatorNotes.slice(0, 10_000),
      author: text(data.creator).slice(0, 200),
      entries,
      customTags: [...new Set(tags)],
    },
  };
}
