import type { AudioCommand } from './audio-command.ts';
import { hasPrototypeSegment } from './json-path.ts';
import { isOperation, type Operation } from './operations.ts';
import type { EngineAudioTrack } from './world-types.ts';

/** A well-formed `[id: operation value]` naming a known variable. */
export interface ParsedDirective {
  text: string;
  variableId: string;
  path: string[];
  operation: Operation;
  raw: string;
}

export interface MalformedDirective {
  text: string;
  variableId: string;
  reason: string;
}

export interface DirectiveScan {
  directives: ParsedDirective[];
  audio: AudioCommand[];
  /** The options the reply offers the player (`[choices: A | B]`), in order, without duplicates. */
  choices: string[];
  malformed: MalformedDirective[];
  /** The reply with every directive naming a known variable (or `audio`, or `choices`) removed. */
  displayText: string;
}

/** The directive a reply offers choices with: `[choices: Open the door | Run | Call out]`. */
export const CHOICES_DIRECTIVE = 'choices';
/** At most this many choices are kept from one reply (the rest are reported as malformed). */
export const MAX_CHOICES = 8;
/** A choice longer than this many characters is cut there. */
export const MAX_CHOICE_LENGTH = 200;

/** The options of a `[choices: …]` body: split on `|`, trimmed, empty and repeated ones dropped. */
function parseChoices(body: string, offered: string[]): { added: number } | { reason: string } {
  const options = body
    .split('|')
    .map((option) => Array.from(option.trim()).slice(0, MAX_CHOICE_LENGTH).join('').trim())
    .filter((option) => option !== '');
  if (options.length === 0) return { reason: 'choices needs at least one option (separate them with |)' };
  let added = 0;
  for (const option of options) {
    if (offered.includes(option)) continue;
    if (offered.length >= MAX_CHOICES) return { reason: `a reply offers at most ${MAX_CHOICES} choices; the rest were dropped` };
    offered.push(option);
    added++;
  }
  return { added };
}

const HEAD = /\[\s*([A-Za-z0-9][A-Za-z0-9_-]*)((?:\.[^\s:[\]]+)*)\s*:/y;
const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Index of the `]` closing the directive opened before `from`, honouring nested brackets and JSON strings. */
function findClose(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let index = from; index < text.length; index++) {
    const char = text[index];
    if (inString) {
      if (char === '\\') index++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === '[' || char === '{') depth++;
    else if (char === '}') depth = Math.max(0, depth - 1);
    else if (char === ']') {
      if (depth === 0) return index;
      depth--;
    } else if (char === '\n' && depth === 0) return -1;
  }
  return -1;
}

function parseBody(body: string): { operation: Operation; raw: string } | { reason: string } {
  const text = body.trim();
  if (text === '') return { reason: 'the directive has no operation or value' };
  const firstWord = (text.split(/\s+/, 1)[0] ?? '').toLowerCase();
  if (isOperation(firstWord)) {
    const raw = text.slice(firstWord.length).trim();
    if (firstWord === 'toggle') return raw === '' ? { operation: 'toggle', raw } : { reason: 'toggle takes no value' };
    if (raw === '') return { reason: `${firstWord} needs a value` };
    return { operation: firstWord, raw };
  }
  const sign = text[0];
  const rest = text.slice(1).trim();
  if ((sign === '+' || sign === '-' || sign === '*') && NUMBER_TEXT.test(rest)) {
    return { operation: sign === '+' ? 'add' : sign === '-' ? 'subtract' : 'multiply', raw: rest };
  }
  return { operation: 'set', raw: text };
}

function parseAudio(body: string, tracks: ReadonlyMap<string, EngineAudioTrack>): AudioCommand | { reason: string } {
  const words = body.trim().split(/\s+/);
  const [trackId = '', action = 'play', ...rest] = words;
  const track = tracks.get(trackId);
  if (!track) return { reason: `unknown audio track "${trackId}"` };
  const source = 'directive';
  switch (action.toLowerCase()) {
    case 'play': {
      if (rest.length === 0) return { action: 'play', trackId, trackType: track.type, source };
      const chain = /^chain:([a-z0-9][a-z0-9_-]*)$/.exec(rest.join(' '));
      if (!chain?.[1]) return { reason: `unexpected "${rest.join(' ')}" after play` };
      if (!tracks.has(chain[1])) return { reason: `unknown audio track "${chain[1]}"` };
      return { action: 'play', trackId, trackType: track.type, chainTo: chain[1], source };
    }
    case 'stop':
      return rest.length === 0 ? { action: 'stop', trackId, source } : { reason: 'stop takes no value' };
    case 'crossfade': {
      const seconds = Number(rest[0]);
      if (rest.length !== 1 || !Number.isFinite(seconds) || seconds < 0) return { reason: 'crossfade needs seconds' };
      return { action: 'crossfade', trackId, trackType: track.type, seconds, source };
    }
    case 'volume': {
      const volume = Number(rest[0]);
      if (rest.length !== 1 || !Number.isFinite(volume) || volume < 0 || volume > 1) return { reason: 'volume needs a number from 0 to 1' };
      return { action: 'volume', trackId, volume, source };
    }
    default:
      return { reason: `unknown audio action "${action}"` };
  }
}

const REMOVED = '\uE001';
const PUNCTUATION = /^[.,!?;:)\]}…。，！？、」』]/;

function tidyRemovals(text: string): string {
  if (!text.includes(REMOVED)) return text;
  let dropped = false;
  const lines = text.split('\n').flatMap((line) => {
    if (!line.includes(REMOVED)) return [line];
    const stripped = line.replaceAll(REMOVED, '');
    if (stripped.trim() === '') {
      dropped = true;
      return [];
    }
    return [
      line.replace(/[ \t]*\uE001(?:[ \t]*\uE001)*[ \t]*/g, (match, offset: number) => {
        const before = line.slice(0, offset).replaceAll(REMOVED, '');
        const after = line.slice(offset + match.length);
        if (before.trim() === '' || after.replaceAll(REMOVED, '').trim() === '') return '';
        if (PUNCTUATION.test(after)) return '';
        return /[ \t]/.test(match) ? ' ' : '';
      }),
    ];
  });
  const joined = lines.join('\n');
  return dropped ? joined.replace(/\n{3,}/g, '\n\n').trim() : joined;
}

/**
 * Finds the directives in an AI reply. Only `[id: ...]` where `id` (before any `.path`) is a
 * known variable id, `audio` or `choices` (unless a variable is named so) is a directive; any
 * other bracketed text stays prose.
 */
export function parseDirectives(
  reply: string,
  /** The world's variables (only `has` is asked: which ids are directives). */
  variables: { has(id: string): boolean },
  tracks: ReadonlyMap<string, EngineAudioTrack>,
): DirectiveScan {
  const directives: ParsedDirective[] = [];
  const audio: AudioCommand[] = [];
  const choices: string[] = [];
  const malformed: MalformedDirective[] = [];
  let output = '';
  let copiedUpTo = 0;
  let index = reply.indexOf('[');
  while (index >= 0) {
    HEAD.lastIndex = index;
    const head = HEAD.exec(reply);
    const id = head?.[1];
    // A path through a prototype key (`[inv.__proto__.x: set 1]`) is not a directive: it stays as text.
    const headPath = head?.[2] ? head[2].slice(1).split('.') : [];
    // A world's own variable of that name wins over `choices` (the directive then sets the variable).
    const isChoices = id === CHOICES_DIRECTIVE && !variables.has(id);
    if (!head || id === undefined || (id !== 'audio' && !isChoices && !variables.has(id)) || hasPrototypeSegment(headPath)) {
      index = reply.indexOf('[', index + 1);
      continue;
    }
    const bodyStart = index + head[0].length;
    const close = findClose(reply, bodyStart);
    if (close < 0) {
      malformed.push({ text: reply.slice(index, Math.min(reply.length, index + 80)), variableId: id, reason: 'the directive has no closing ]' });
      index = reply.indexOf('[', index + 1);
      continue;
    }
    const text = reply.slice(index, close + 1);
    const body = reply.slice(bodyStart, close);
    const pathText = head[2] ?? '';
    if (id === 'audio') {
      const command = pathText ? { reason: 'audio directives take no path' } : parseAudio(body, tracks);
      if ('reason' in command) malformed.push({ text, variableId: id, reason: command.reason });
      else audio.push(command);
    } else if (isChoices) {
      const offered = pathText ? { reason: 'choices take no path' } : parseChoices(body, choices);
      if ('reason' in offered) malformed.push({ text, variableId: id, reason: offered.reason });
    } else {
      const parsed = parseBody(body);
      if ('reason' in parsed) malformed.push({ text, variableId: id, reason: parsed.reason });
      else directives.push({ text, variableId: id, path: pathText ? pathText.slice(1).split('.') : [], operation: parsed.operation, raw: parsed.raw });
    }
    output += reply.slice(copiedUpTo, index) + REMOVED;
    copiedUpTo = close + 1;
    index = reply.indexOf('[', close + 1);
  }
  output += reply.slice(copiedUpTo);
  return { directives, audio, choices, malformed, displayText: tidyRemovals(output) };
}

/**
 * What a player reads of a reply: `displayText` of runTurn, for a host that knows only the
 * world's variable ids (a custom interface's message bubble, a reply still streaming). Every
 * directive naming one of `variableIds`, `audio` or `choices` is removed (a malformed one too); any other
 * bracketed text (`[Note: …]`, `[1]`, an id in the wrong case) stays. With `partial` (a reply still
 * arriving) a directive not closed yet on the last line is hidden too, as is its beginning (`[h`
 * when a variable id starts with `h`), so a streamed `[hp: -1` never flashes up. Browser-safe; also
 * exported alone as `@yumina/world/directives`, so a bundle needs nothing else of the engine.
 */
export function displayedText(reply: string, variableIds: Iterable<string>, options: { partial?: boolean } = {}): string {
  const ids = new Set(variableIds);
  return parseDirectives(options.partial ? withoutPendingDirective(reply, ids) : reply, ids, new Map()).displayText;
}

const PENDING_HEAD = /\[\s*([A-Za-z0-9][A-Za-z0-9_-]*)?(?:\.[^\s:[\]]*)*\s*$/;

/** The reply up to a directive of a known id that is still being written at its end. */
function withoutPendingDirective(reply: string, ids: ReadonlySet<string>): string {
  const known = (id: string) => id === 'audio' || id === CHOICES_DIRECTIVE || ids.has(id);
  const lineStart = reply.lastIndexOf('\n') + 1;
  for (let index = reply.indexOf('[', lineStart); index >= 0; index = reply.indexOf('[', index + 1)) {
    HEAD.lastIndex = index;
    const head = HEAD.exec(reply);
    if (head?.[1] !== undefined && known(head[1]) && findClose(reply, index + head[0].length) < 0) return reply.slice(0, index).replace(/[ \t]+$/, '');
  }
  // The very start of one: `[`, `[h`, `[hp`, `[bag.sta` at the end, naming (the start of) a known id.
  const start = PENDING_HEAD.exec(reply.slice(lineStart));
  if (start) {
    const partial = start[1] ?? '';
    const dotted = start[0].includes('.');
    const matches = dotted ? known(partial) : partial === '' || [...ids, 'audio', CHOICES_DIRECTIVE].some((id) => id.startsWith(partial));
    if (matches) return reply.slice(0, lineStart + start.index).replace(/[ \t]+$/, '');
  }
  return reply;
}
