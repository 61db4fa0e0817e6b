import type { PathSegment } from '../schema/issue-path.ts';
import { WORLD_SCHEMA_VERSION } from '../schema/world-schema.ts';
import type { ReportBuilder } from './import-report.ts';

/**
 * WorldDefinition versions 5.x through 25.x of the public format → 20.0.0. Each step looks at the
 * shape it converts (not only at the version number), so a world saved half-way between versions
 * still converts:
 *  - entries in the older layout (a `position` keyword instead of a `section`, roles
 *    `personality`/`lore` → `character`/`system`, missing `keywords`/`enabled`);
 *  - the legacy interface fields `messageRenderer`, `customComponents` and `customUI` (items with
 *    code) → `rootComponent`; a non-UUID `rootComponent.id` such as `<worldId>:root` → a UUID;
 *  - reactions in the editor's form: trigger details nested under `when.match`, `when.type` for
 *    `when.eventType`, button events named `action:fired` (this platform's `action`);
 *  - a non-UUID world `id` → a UUID.
 * Fields of newer versions that 20.0.0 lacks are removed by validation and reported as dropped.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export const OLDEST_IMPORTED_MAJOR = 5;
export const NEWEST_IMPORTED_MAJOR = 25;

/** The major version of a `version` string, or null when it is not one. */
export function majorOf(version: unknown): number | null {
  if (typeof version !== 'string') return null;
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+][0-9A-Za-z.+-]*)?$/i.exec(version.trim());
  return match ? Number(match[1]) : null;
}

/** A stable UUID (version 4 layout) derived from text, so importing the same world twice gives the same ids. */
export function uuidFromText(text: string): string {
  const hex: string[] = [];
  for (let round = 0; round < 4; round++) {
    let hash = 0x811c9dc5 ^ round;
    for (let index = 0; index < text.length; index++) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193);
    hash = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d);
    hex.push((hash >>> 0).toString(16).padStart(8, '0'));
  }
  const all = hex.join('');
  return `${all.slice(0, 8)}-${all.slice(8, 12)}-4${all.slice(13, 16)}-${'89ab'[Number.parseInt(all[16] ?? '0', 16) & 3]}${all.slice(17, 20)}-${all.slice(20, 32)}`;
}

/** Position keywords of the older entry layout → section. */
const POSITION_SECTIONS: Record<string, string> = {
  top: 'system-presets',
  system: 'system-presets',
  before_char: 'system-presets',
  after_char: 'system-presets',
  'before-char': 'system-presets',
  'after-char': 'system-presets',
  character: 'system-presets',
  example: 'examples',
  examples: 'examples',
  keyword: 'chat-history',
  lorebook: 'chat-history',
  chat: 'chat-history',
  depth: 'chat-history',
  at_depth: 'chat-history',
  bottom: 'post-history',
  post: 'post-history',
  post_history: 'post-history',
  'post-history': 'post-history',
  author_note: 'post-history',
};
const OLD_ROLES: Record<string, string> = { personality: 'character', lore: 'system' };

function migrateEntries(world: Json, report: ReportBuilder): void {
  if (!Array.isArray(world.entries)) return;
  world.entries.forEach((raw, index) => {
    if (!isObject(raw)) return;
    const entry = raw;
    const at: PathSegment[] = ['entries', index];
    if (entry.section === undefined) {
      const keyword = typeof entry.position === 'string' ? entry.position : undefined;
      const order = typeof entry.order === 'number' ? entry.order : typeof entry.insertionOrder === 'number' ? entry.insertionOrder : index;
      if (keyword !== undefined) {
        const section = POSITION_SECTIONS[keyword.toLowerCase()] ?? (Array.isArray(entry.keywords) && entry.keywords.length > 0 ? 'chat-history' : 'system-presets');
        entry.section = section;
        entry.position = order;
        report.converted([...at, 'position'], `position keyword "${keyword}" → section "${section}", position ${order}`);
      } else {
        const section = Array.isArray(entry.keywords) && entry.keywords.length > 0 ? 'chat-history' : 'system-presets';
        entry.section = section;
        report.defaulted([...at, 'section'], `no section; "${section}" (${section === 'chat-history' ? 'it has keywords' : 'no keywords: always sent'})`);
        if (typeof entry.position !== 'number') entry.position = order;
      }
      // Set to undefined rather than deleted (deleting slows every later read of a large world); validation leaves it out.
      if ('order' in entry) {
        entry.order = undefined;
        report.renamed([...at, 'order'], 'order → position');
      }
      if ('insertionOrder' in entry) {
        entry.insertionOrder = undefined;
        report.renamed([...at, 'insertionOrder'], 'insertionOrder → position');
      }
      if (typeof entry.role === 'string' && OLD_ROLES[entry.role]) {
        report.converted([...at, 'role'], `role "${entry.role}" → "${OLD_ROLES[entry.role]}"`);
        entry.role = OLD_ROLES[entry.role];
      }
    }
    if (entry.keywords === undefined && Array.isArray(entry.keys)) {
      entry.keywords = entry.keys;
      entry.keys = undefined;
      report.renamed([...at, 'keys'], 'keys → keywords');
    }
    if (entry.keywords === undefined) {
      entry.keywords = [];
      report.defaulted([...at, 'keywords'], 'missing; [] (no keywords)');
    }
    if (entry.enabled === undefined) {
      entry.enabled = true;
      report.defaulted([...at, 'enabled'], 'missing; true');
    }
  });
}

const MESSAGE_RENDERER_INDEX = `import MessageRenderer from './message-renderer';

export default function App() {
  return <Chat renderBubble={(bubble) => <MessageRenderer {...bubble} />} />;
}
`;

function codeOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!isObject(value)) return undefined;
  for (const key of ['code', 'source', 'tsx', 'content']) if (typeof value[key] === 'string') return value[key] as string;
  return undefined;
}

function fileName(name: unknown, fallback: string): string {
  const base = typeof name === 'string' && name.trim() ? name.trim().replace(/[^A-Za-z0-9_-]+/g, '-').replace(/^-|-$/g, '') : '';
  return `${base || fallback}.tsx`;
}

function migrateInterface(world: Json, report: ReportBuilder, updatedAt: string): void {
  const hasRoot = isObject(world.rootComponent);
  const files: Record<string, string> = {};
  let entryFile: string | undefined;
  if (world.messageRenderer !== undefined && world.messageRenderer !== null) {
    const code = codeOf(world.messageRenderer);
    if (hasRoot) report.dropped(['messageRenderer'], 'legacy message renderer; the world has a rootComponent, which replaces it');
    else if (code === undefined) report.dropped(['messageRenderer'], 'legacy message renderer without code');
    else {
      files['message-renderer.tsx'] = code;
      files['index.tsx'] = MESSAGE_RENDERER_INDEX;
      entryFile = 'index.tsx';
      report.converted(['messageRenderer'], 'legacy message renderer → rootComponent files "message-renderer.tsx" (the bubble) and "index.tsx" (a Chat that renders every bubble with it)');
    }
    delete world.messageRenderer;
  }
  if (Array.isArray(world.customComponents)) {
    world.customComponents.forEach((component, index) => {
      const code = codeOf(component);
      const name = fileName(isObject(component) ? component.name ?? component.id : undefined, `component-${index}`);
      if (hasRoot) report.dropped(['customComponents', index], 'legacy custom component; the world has a rootComponent, which replaces it');
      else if (code === undefined) report.dropped(['customComponents', index], 'legacy custom component without code');
      else {
        files[`components/${name}`] = code;
        entryFile ??= `components/${name}`;
        report.converted(['customComponents', index], `legacy custom component → rootComponent file "components/${name}"`);
      }
    });
    delete world.customComponents;
  }
  if (Array.isArray(world.customUI) && !hasRoot) {
    const kept: unknown[] = [];
    world.customUI.forEach((item, index) => {
      const code = codeOf(isObject(item) ? (item.code ?? item.source ?? item.tsx) : undefined);
      if (code === undefined) {
        kept.push(item);
        return;
      }
      const name = fileName(isObject(item) ? item.name ?? item.id : undefined, `custom-ui-${index}`);
      files[`custom-ui/${name}`] = code;
      entryFile ??= `custom-ui/${name}`;
      report.converted(['customUI', index], `legacy custom UI → rootComponent file "custom-ui/${name}"`);
    });
    world.customUI = kept;
  }
  if (!hasRoot && Object.keys(files).length > 0) {
    const worldId = typeof world.id === 'string' ? world.id : String(world.name ?? '');
    world.rootComponent = { id: uuidFromText(`${worldId}:root`), name: 'Custom interface', entryFile: entryFile ?? 'index.tsx', files, updatedAt };
    report.defaulted(['rootComponent'], `built from the legacy interface fields (entry file "${entryFile ?? 'index.tsx'}")`);
  }
  const root = world.rootComponent;
  if (isObject(root)) {
    if (typeof root.id !== 'string' || !UUID.test(root.id)) {
      const id = uuidFromText(typeof root.id === 'string' ? root.id : `${String(world.id ?? world.name)}:root`);
      if (root.id === undefined) report.defaulted(['rootComponent', 'id'], `missing; ${id}`);
      else report.converted(['rootComponent', 'id'], `"${String(root.id)}" is not a UUID → ${id}`);
      root.id = id;
    }
    if (typeof root.name !== 'string') {
      root.name = 'Custom interface';
      report.defaulted(['rootComponent', 'name'], 'missing; "Custom interface"');
    }
    if (root.updatedAt === undefined) {
      root.updatedAt = updatedAt;
      report.defaulted(['rootComponent', 'updatedAt'], `missing; ${updatedAt}`);
    }
    if (typeof root.entryFile !== 'string' && isObject(root.files)) {
      const first = 'index.tsx' in root.files ? 'index.tsx' : Object.keys(root.files)[0];
      if (first) {
        root.entryFile = first;
        report.defaulted(['rootComponent', 'entryFile'], `missing; "${first}"`);
      }
    }
  }
}

function migrateReactions(world: Json, report: ReportBuilder): void {
  if (!Array.isArray(world.reactions)) return;
  world.reactions.forEach((raw, index) => {
    if (!isObject(raw)) return;
    const at: PathSegment[] = ['reactions', index];
    if (raw.then === undefined && Array.isArray(raw.effects)) {
      raw.then = raw.effects;
      delete raw.effects;
      report.renamed([...at, 'effects'], 'effects → then');
    }
    const when = raw.when;
    if (!isObject(when)) return;
    if (when.eventType === undefined && typeof when.type === 'string') {
      when.eventType = when.type;
      delete when.type;
      report.renamed([...at, 'when', 'type'], 'type → eventType');
    }
    if (isObject(when.match)) {
      const members = Object.keys(when.match);
      for (const [key, value] of Object.entries(when.match)) if (when[key] === undefined) when[key] = value;
      delete when.match;
      report.converted([...at, 'when', 'match'], `the editor's nested trigger details (${members.join(', ') || 'none'}) → members of when`);
    }
    if (when.eventType === 'action:fired') {
      when.eventType = 'action';
      report.renamed([...at, 'when', 'eventType'], '"action:fired" → "action" (the event an interface button fires)');
      if (when.actionId === undefined) {
        for (const key of ['action', 'id', 'name']) {
          if (typeof when[key] === 'string') {
            when.actionId = when[key];
            delete when[key];
            report.renamed([...at, 'when', key], `${key} → actionId`);
            break;
          }
        }
      }
    }
  });
}

/**
 * Rules of older versions list their actions as `effects`; a rule with `effects: []` only marks a
 * condition (editors showed it as a switch). Renamed to `actions`; an empty list is kept (the rule
 * still fires, counts and cools down, and does nothing), and the report says so.
 */
function migrateRules(world: Json, report: ReportBuilder): void {
  if (!Array.isArray(world.rules)) return;
  world.rules.forEach((raw, index) => {
    if (!isObject(raw)) return;
    const at: PathSegment[] = ['rules', index];
    if (raw.actions === undefined && Array.isArray(raw.effects)) {
      const effects = raw.effects;
      raw.actions = effects;
      delete raw.effects;
      if (effects.length === 0) report.converted([...at, 'effects'], 'no effects: kept as a rule (a condition) that does nothing when it fires');
      else report.renamed([...at, 'effects'], 'effects → actions');
    } else if (raw.actions === undefined) {
      raw.actions = [];
      report.defaulted([...at, 'actions'], 'missing; [] (kept as a rule that does nothing when it fires)');
    }
  });
}

/** Converts a world of the public format in place. `updatedAt` is used where a timestamp is missing. */
export function migrateWorld(world: Json, report: ReportBuilder, generateId: () => string, updatedAt: string): void {
  const from = String(world.version);
  if (world.version !== WORLD_SCHEMA_VERSION) {
    world.version = WORLD_SCHEMA_VERSION;
    report.converted(['version'], `${from} → ${WORLD_SCHEMA_VERSION}`);
  }
  if (world.id === undefined || world.id === null) {
    world.id = generateId();
    report.defaulted(['id'], `missing; ${String(world.id)}`);
  }
  migrateInterface(world, report, updatedAt);
  if (typeof world.id === 'string' && !UUID.test(world.id)) {
    const id = uuidFromText(world.id);
    report.converted(['id'], `"${world.id}" is not a UUID → ${id}`);
    world.id = id;
  }
  migrateEntries(world, report);
  migrateReactions(world, report);
  migrateRules(world, report);
  if (Array.isArray(world.variables)) {
    world.variables.forEach((variable, index) => {
      if (isObject(variable) && variable.category !== undefined) {
        report.dropped(['variables', index, 'category'], `category "${String(variable.category)}" is accepted from authoring tools but is not part of the schema (seed 002 §2.4)`);
        delete variable.category;
      }
    });
  }
}
