import { formatIssuePath } from '../schema/issue-path.ts';
import { type ValidationIssue, validateWorld } from '../schema/validate-world.ts';
import type { WorldDefinition } from '../schema/world-schema.ts';
import { convertAssetLinks } from './asset-links.ts';
import { carriedWorld } from './card-edits.ts';
import { cardSourceOf } from './card-export.ts';
import type { CardSource } from './card-source.ts';
import { cleanImportedText } from './clean-text.ts';
import { IMPORT_MAX_DEPTH, tooDeepPath } from './nesting.ts';
import { type CardConflict, type ImportAsset, type ImportFormat, type ImportMedia, type ImportReport, ReportBuilder } from './import-report.ts';
import { compressedPngTextKeywords, decodeBase64Utf8, isPng, readPngTextBytes } from './png-text.ts';
import { repairWorld } from './repair.ts';
import { convertCard, isCard } from './sillytavern-card.ts';
import { convertWorldInfo, isWorldInfo } from './world-info.ts';
import { majorOf, migrateWorld, NEWEST_IMPORTED_MAJOR, OLDEST_IMPORTED_MAJOR } from './world-versions.ts';

export type ImportResult =
  | {
      readonly ok: true;
      readonly world: WorldDefinition;
      readonly report: ImportReport;
      readonly media: ImportMedia[];
      /** For a character card: the card kept for the way back (exportCard's `source`), else null. */
      readonly cardSource: CardSource | null;
    }
  | {
      readonly ok: false;
      readonly issues: ValidationIssue[];
      readonly report: ImportReport | null;
      /** TOO_DEEP: the file nests deeper than IMPORT_MAX_DEPTH (the issue's path names where); nothing walked it. */
      readonly code?: 'TOO_DEEP';
    };

export interface ImportOptions {
  /** The world id when the input has none (default: a random UUID). */
  generateId?: () => string;
  /** The timestamp for a converted interface (default: now). */
  now?: () => Date;
  /** The name of a lorebook that has none (a file name, say). */
  fallbackName?: string;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const STRIPPED = 'is not a field of WorldDefinition 20.0.0 and was removed';

function refused(path: string, message: string): ImportResult {
  return { ok: false, issues: [{ path, message }], report: null };
}

/** Bytes (a PNG card or UTF-8 JSON), JSON text, or an already parsed value → a parsed value. */
function parseInput(input: unknown): { value: unknown; png: boolean; parsedHere: boolean } | ImportResult {
  if (input instanceof Uint8Array) {
    if (isPng(input)) {
      let texts: Map<string, { bytes: Uint8Array; utf8: boolean }>;
      try {
        // Only the two card chunks are read, as bytes: no other chunk becomes a string.
        texts = readPngTextBytes(input, ['ccv3', 'chara']);
      } catch (error) {
        return refused('', (error as Error).message);
      }
      const text = texts.get('ccv3') ?? texts.get('chara');
      const chunk = text === undefined ? undefined : text.utf8 ? new TextDecoder().decode(text.bytes) : text.bytes;
      if (chunk === undefined) {
        const compressed = compressedPngTextKeywords(input).filter((keyword) => keyword === 'ccv3' || keyword === 'chara');
        if (compressed.length > 0) return refused('', `this PNG keeps its card in a compressed text chunk ("${compressed[0]}"), which this importer does not read; export the card again from SillyTavern (it writes plain tEXt chunks) or import its JSON`);
        return refused('', 'this PNG has no character card: neither a "ccv3" nor a "chara" text chunk');
      }
      try {
        return { value: JSON.parse(decodeBase64Utf8(chunk)) as unknown, png: true, parsedHere: true };
      } catch (error) {
        return refused('', `the PNG's card text chunk is not base64 JSON: ${(error as Error).message}`);
      }
    }
    try {
      return parseInput(new TextDecoder('utf-8', { fatal: true }).decode(input));
    } catch {
      return refused('', 'the file is neither a PNG nor UTF-8 text');
    }
  }
  if (typeof input === 'string') {
    try {
      return { value: JSON.parse(input.replace(/^\uFEFF/, '')) as unknown, png: false, parsedHere: true };
    } catch (error) {
      return refused('', `not valid JSON: ${(error as Error).message}`);
    }
  }
  return { value: input, png: false, parsedHere: false };
}

/**
 * Imports a world from any accepted form: WorldDefinition 5.x–25.x of the public format, a
 * SillyTavern character card (V1/V2/V3 JSON, or a PNG with a `chara`/`ccv3` text chunk) or a
 * SillyTavern World Info file. The result is a valid WorldDefinition 20.0.0 and a report of every
 * change with its path; or, when the converted world still does not validate, every issue with
 * its path (nothing is half-imported). The input is never modified.
 */
export function importWorld(input: unknown, options: ImportOptions = {}): ImportResult {
  const parsed = parseInput(input);
  if ('ok' in parsed) return parsed;
  if (!isObject(parsed.value)) return refused('', 'an importable file holds a JSON object (a world, a character card or a World Info lorebook)');
  // Before any walk over the file (each recursive): a file nested ten thousand deep overflowed the stack.
  const deep = tooDeepPath(parsed.value);
  if (deep) {
    return { ok: false, code: 'TOO_DEEP', issues: [{ path: formatIssuePath(deep), message: `nests objects or arrays deeper than ${IMPORT_MAX_DEPTH} levels, which no importable file does` }], report: null };
  }
  // A value parsed here is ours to convert in place; a caller's value is copied first.
  const source = parsed.parsedHere ? parsed.value : structuredClone(parsed.value);
  const report = new ReportBuilder();
  // Text that cannot be stored is cleaned where the input has it (paths in the input's terms).
  cleanImportedText(source, report);
  const generateId = options.generateId ?? (() => globalThis.crypto.randomUUID());
  const now = (options.now ?? (() => new Date()))().toISOString();

  let format: ImportFormat;
  let sourceVersion: string;
  let world: Json;
  let assets: ImportAsset[] = [];
  const media: ImportMedia[] = [];
  let cardIds: CardSource['ids'] | null = null;
  let conflicts: CardConflict[] = [];
  const carriedCard = isCard(source) ? carriedWorld(source, report) : null;
  const carried = carriedCard?.world ?? null;
  if (carriedCard && carried) {
    cardIds = carriedCard.ids;
    conflicts = carriedCard.conflicts;
    // A card exported from here: the world it carries, with any card field edited since put back.
    format = 'sillytavern-card';
    const spec = typeof source.spec === 'string' ? source.spec : 'chara_card_v1';
    sourceVersion = `${spec}${parsed.png ? ' (png)' : ''}, world ${carried.version}`;
    world = carried;
    const major = majorOf(world.version);
    if (major !== null && major >= OLDEST_IMPORTED_MAJOR && major <= NEWEST_IMPORTED_MAJOR && world.version !== '20.0.0') migrateWorld(world, report, generateId, now);
    if (parsed.png && input instanceof Uint8Array) {
      assets.push({ id: 'picture', reference: "the PNG card's image", paths: ['(file)'], embedded: 'picture' });
      media.push({ id: 'picture', embedded: 'picture', bytes: input });
    }
  } else if (isCard(source)) {
    const card = convertCard(source, report);
    format = 'sillytavern-card';
    sourceVersion = parsed.png ? `${card.sourceVersion} (png)` : card.sourceVersion;
    world = card.world;
    cardIds = card.ids;
    assets = card.assets;
    media.push(...card.media);
    if (parsed.png && input instanceof Uint8Array) {
      assets.unshift({ id: 'picture', reference: 'the PNG card\'s image', paths: ['(file)'], embedded: 'picture' });
      media.unshift({ id: 'picture', embedded: 'picture', bytes: input });
    }
    world.id = generateId();
    report.defaulted(['id'], `a card has no world id; ${String(world.id)}`);
  } else if (isWorldInfo(source)) {
    format = 'sillytavern-world-info';
    sourceVersion = 'world-info';
    world = convertWorldInfo(source, report, options.fallbackName ?? 'Imported lorebook');
    world.id = generateId();
    report.defaulted(['id'], `a lorebook has no world id; ${String(world.id)}`);
  } else {
    format = 'world';
    sourceVersion = typeof source.version === 'string' ? source.version : String(source.version);
    const major = majorOf(source.version);
    if (major === null) {
      return refused('version', source.version === undefined ? 'is required: the WorldDefinition version the world was saved in (5.x through 25.x can be imported)' : `"${sourceVersion}" is not a WorldDefinition version (5.x through 25.x can be imported)`);
    }
    if (major < OLDEST_IMPORTED_MAJOR || major > NEWEST_IMPORTED_MAJOR) {
      return refused('version', `${sourceVersion} cannot be imported: versions ${OLDEST_IMPORTED_MAJOR}.x through ${NEWEST_IMPORTED_MAJOR}.x can`);
    }
    world = source;
    migrateWorld(world, report, generateId, now);
  }
  assets = [...assets, ...convertAssetLinks(world, report)];

  const fullReport = (warnings: { path: string; message: string }[]): ImportReport => ({ format, sourceVersion, changes: report.changes, assets, warnings, ...(conflicts.length > 0 ? { conflicts } : {}) });
  let validation = validateWorld(world);
  if (!validation.ok) {
    // One part that cannot convert never refuses the whole world: repair or drop it, and say so.
    const repaired = repairWorld(world, report);
    if (!repaired.ok) return { ok: false, issues: repaired.issues, report: fullReport([]) };
    validation = validateWorld(world);
    if (!validation.ok) return { ok: false, issues: validation.issues, report: fullReport([]) };
  }
  const warnings: { path: string; message: string }[] = [...report.warnings];
  for (const warning of validation.warnings) {
    if (warning.message === STRIPPED) {
      report.changes.push({ kind: 'dropped', path: warning.path, message: `a field worlds here do not have${format === 'world' ? ` (the file is of version ${sourceVersion})` : ''}` });
    } else warnings.push(warning);
  }
  // A conflict keeps the world's text: the card kept for the next export says so too, until the author takes the card's.
  const sourceData = isObject(source.data) ? source.data : source;
  for (const conflict of conflicts) sourceData[conflict.field] = conflict.world;
  const cardSource = cardIds ? cardSourceOf(source, cardIds, validation.world) : null;
  return { ok: true, world: validation.world, report: fullReport(warnings), media, cardSource };
}
