import { hashString, randomInt, type RandomSource } from './random.ts';

export interface Persona {
  name?: string;
  appearance?: string;
  personality?: string;
  backstory?: string;
  /** Free text shown as `{{persona}}`; built from the fields when absent. */
  description?: string;
}

export interface MacroContext {
  charName: string;
  userName: string;
  persona: Persona | null;
  now: Date;
  /** IANA zone for time, date, weekday, isodate and isotime. */
  timeZone: string;
  lastUserMessageAt: string | null;
  turnCount: number;
  model: string;
  lastMessage: string;
  lastUserMessage: string;
  lastCharMessage: string;
  variables: Readonly<Record<string, unknown>>;
  variableIds: ReadonlySet<string>;
  /** Draws for `random` and `roll`: one stream per turn, so values re-roll each turn. */
  random: RandomSource;
  /** Seed for `pick`: world seed, session id and turn, so it is stable within a turn of a session. */
  pickSeed: string;
}

/** Deeper `{{...}}` nesting than this stays literal text. */
export const MAX_MACRO_DEPTH = 8;

/**
 * The `user` macro: the active persona's name, else the account's username, else the
 * world's `settings.playerName`, else "Player" when that is empty.
 */
export function resolveUserName(persona: Persona | null | undefined, accountName: string | null | undefined, playerName: string | null | undefined): string {
  for (const candidate of [persona?.name, accountName, playerName]) {
    if (typeof candidate === 'string' && candidate.trim() !== '') return candidate.trim();
  }
  return 'Player';
}

export function describePersona(persona: Persona | null): string {
  if (!persona) return '';
  if (persona.description) return persona.description;
  const parts: string[] = [];
  if (persona.name) parts.push(`Name: ${persona.name}`);
  if (persona.appearance) parts.push(`Appearance: ${persona.appearance}`);
  if (persona.personality) parts.push(`Personality: ${persona.personality}`);
  if (persona.backstory) parts.push(`Backstory: ${persona.backstory}`);
  return parts.join('\n');
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function clockParts(now: Date, timeZone: string): Record<string, string> {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      weekday: 'long',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, string> = {};
  for (const part of formatter.formatToParts(now)) parts[part.type] = part.value;
  return parts;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

function isoDate(parts: Record<string, string>): string {
  const month = MONTHS.indexOf(parts.month ?? '') + 1;
  return `${parts.year}-${String(month).padStart(2, '0')}-${(parts.day ?? '').padStart(2, '0')}`;
}

export function humanizeDuration(milliseconds: number): string {
  const seconds = Math.max(0, Math.floor(milliseconds / 1000));
  const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? '' : 's'}`;
  if (seconds < 60) return 'less than a minute';
  if (seconds < 3600) return plural(Math.floor(seconds / 60), 'minute');
  if (seconds < 86_400) return plural(Math.floor(seconds / 3600), 'hour');
  return plural(Math.floor(seconds / 86_400), 'day');
}

function serialize(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

const DICE = /^(\d*)d(\d+)\s*([+-]\s*\d+)?$/i;

function roll(spec: string, random: RandomSource): string | undefined {
  const match = DICE.exec(spec.trim());
  if (!match) return undefined;
  const count = match[1] ? Number(match[1]) : 1;
  const sides = Number(match[2]);
  if (count < 1 || count > 1000 || sides < 1) return undefined;
  let total = match[3] ? Number(match[3].replace(/\s+/g, '')) : 0;
  for (let die = 0; die < count; die++) total += randomInt(random, sides) + 1;
  return String(total);
}

/** Options of `random`/`pick`: `::`-separated, or a single comma-separated list. */
function choices(args: readonly string[]): string[] {
  const options = args.slice(1);
  if (options.length === 1 && (options[0] ?? '').includes(',')) return (options[0] ?? '').split(',').map((option) => option.trim());
  return options;
}

const TRIM_MARK = '\uE000';

function evaluate(args: readonly string[], context: MacroContext): string | undefined {
  const rawName = args[0] ?? '';
  const name = rawName.trim();
  if (name.startsWith('//')) return '';
  const lower = name.toLowerCase();
  const persona = context.persona;
  switch (lower) {
    case 'char':
      return context.charName;
    case 'user':
      return context.userName;
    case 'persona':
      return describePersona(persona);
    case 'persona_name':
      return persona?.name ?? context.userName;
    case 'persona_appearance':
      return persona?.appearance ?? '';
    case 'persona_personality':
      return persona?.personality ?? '';
    case 'persona_backstory':
      return persona?.backstory ?? '';
    case 'time': {
      const parts = clockParts(context.now, context.timeZone);
      return `${parts.hour}:${parts.minute}`;
    }
    case 'date': {
      const parts = clockParts(context.now, context.timeZone);
      return `${parts.month} ${parts.day}, ${parts.year}`;
    }
    case 'weekday':
      return clockParts(context.now, context.timeZone).weekday ?? '';
    case 'isodate':
      return isoDate(clockParts(context.now, context.timeZone));
    case 'isotime': {
      const parts = clockParts(context.now, context.timeZone);
      return `${parts.hour}:${parts.minute}:${parts.second}`;
    }
    case 'idle':
      return context.lastUserMessageAt === null
        ? 'less than a minute'
        : humanizeDuration(context.now.getTime() - Date.parse(context.lastUserMessageAt));
    case 'turncount':
      return String(context.turnCount);
    case 'model':
      return context.model;
    case 'lastmessage':
      return context.lastMessage;
    case 'lastusermessage':
      return context.lastUserMessage;
    case 'lastcharmessage':
      return context.lastCharMessage;
    case 'trim':
      return args.length === 1 ? TRIM_MARK : undefined;
    case 'random': {
      const options = choices(args);
      return options.length === 0 ? undefined : options[randomInt(context.random, options.length)];
    }
    case 'pick': {
      const options = choices(args);
      if (options.length === 0) return undefined;
      return options[hashString(`${context.pickSeed}|${options.join('::')}`) % options.length];
    }
    case 'roll':
      return args.length === 2 ? roll(args[1] ?? '', context.random) : undefined;
  }
  if (args.length === 1 && context.variableIds.has(name)) return serialize(context.variables[name]);
  return undefined;
}

interface Frame {
  args: string[];
}

/**
 * Expands `{{...}}` macros inside out, so `{{random::{{char}}::{{user}}}}` resolves its
 * arguments first. Unknown macros, unclosed braces and nesting deeper than MAX_MACRO_DEPTH stay
 * literal. `{{trim}}` removes the whitespace around it; `{{// note}}` disappears.
 */
export function expandMacros(text: string, context: MacroContext): string {
  if (!text.includes('{{')) return text;
  const stack: Frame[] = [];
  let output = '';
  let literalDepth = 0;
  const append = (chunk: string) => {
    const top = stack[stack.length - 1];
    if (!top) output += chunk;
    else top.args[top.args.length - 1] += chunk;
  };
  let index = 0;
  let plainStart = 0;
  const flushPlain = (end: number) => {
    if (end > plainStart) append(text.slice(plainStart, end));
  };
  while (index < text.length) {
    if (text.startsWith('{{', index)) {
      flushPlain(index);
      if (stack.length >= MAX_MACRO_DEPTH) {
        literalDepth++;
        append('{{');
      } else {
        stack.push({ args: [''] });
      }
      index += 2;
      plainStart = index;
    } else if (text.startsWith('}}', index) && (stack.length > 0 || literalDepth > 0)) {
      flushPlain(index);
      if (literalDepth > 0) {
        literalDepth--;
        append('}}');
      } else {
        const frame = stack.pop() as Frame;
        const value = evaluate(frame.args, context);
        append(value ?? `{{${frame.args.join('::')}}}`);
      }
      index += 2;
      plainStart = index;
    } else if (stack.length > 0 && literalDepth === 0 && text.startsWith('::', index)) {
      flushPlain(index);
      (stack[stack.length - 1] as Frame).args.push('');
      index += 2;
      plainStart = index;
    } else {
      index++;
    }
  }
  flushPlain(text.length);
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    append(`{{${frame.args.join('::')}`);
  }
  return output.includes(TRIM_MARK) ? output.replace(/\s*\uE000\s*/g, '') : output;
}
