/**
 * The author command line: test a world offline, or script it.
 *
 *   npm run world -- validate <world.json>
 *   npm run world -- import <file> [--out <world.json>]
 *   npm run world -- export <world.json> --card <out.png|out.json> [--image <picture>] [--source <the card it was imported from>]
 *   npm run world -- action <world.json> <actionId> [--state <state.json>] [--seed N] [--now <ISO time>] [--session <id>]
 *   npm run world -- turn <world.json> [--state <state.json>] --user <text> --reply <text>
 *                         [--history <messages.json>] [--seed N] [--now <ISO time>] [--session <id>]
 *   npm run world -- prompt <world.json> [--state <state.json>] [--history <messages.json>]
 *                         [--user <text>] [--seed N] [--now <ISO time>] [--session <id>]
 *
 * Exit codes: 0 success; 1 the world is invalid (or could not be imported); 2 usage error,
 * missing file or bad JSON (one clear line on stderr).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { parseArgs } from 'node:util';
import { cardPicturePng, placeholderCardPng } from '../packages/assets/src/card-picture.ts';
import {
  assemblePrompt,
  cardPng,
  dispatchEvents,
  exportCard,
  type HistoryMessage,
  importWorld,
  isPng,
  lintWorld,
  pngWithoutText,
  reportLines,
  runTurn,
  startSession,
  validateWorld,
  type WorldDefinition,
  type WorldState,
} from '../packages/world/src/index.ts';

class CliError extends Error {
  readonly code = 'WORLD_CLI_USAGE';
}

class InvalidWorldError extends Error {
  readonly code = 'WORLD_INVALID';
  constructor(readonly issues: readonly Issue[]) {
    super('the world is invalid');
  }
}

const USAGE = `usage:
  npm run world -- validate <world.json>
  npm run world -- import <file: world JSON of version 5.x-25.x, SillyTavern card JSON or PNG, World Info JSON> [--out <world.json>]
  npm run world -- export <world.json> --card <out.png|out.json> [--image <picture: PNG, JPEG, WebP, GIF or AVIF>] [--source <card the world was imported from: PNG or JSON>]
  npm run world -- action <world.json> <actionId> [--state <state.json>] [--seed N] [--now <ISO time>] [--session <id>]
  npm run world -- turn <world.json> [--state <state.json>] --user <text> --reply <text> [--history <messages.json>] [--seed N] [--now <ISO time>] [--session <id>]
  npm run world -- prompt <world.json> [--state <state.json>] [--history <messages.json>] [--user <text>] [--seed N] [--now <ISO time>] [--session <id>]`;

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? `${what} file not found: ${path}` : `cannot read ${what} file ${path}: ${code ?? (error as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliError(`${what} file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}

interface Issue {
  path: string;
  message: string;
}

/** Reads and validates a world: the normalized world (defaults filled in) and its warnings, or InvalidWorldError. */
function loadWorldWithWarnings(path: string): { world: WorldDefinition; warnings: Issue[] } {
  const result = validateWorld(readJson(path, 'world'));
  if (!result.ok) throw new InvalidWorldError(result.issues);
  return { world: result.world, warnings: [...result.warnings, ...lintWorld(result.world)] };
}

function loadWorld(path: string): WorldDefinition {
  return loadWorldWithWarnings(path).world;
}

function readBytes(path: string, what: string): Uint8Array {
  try {
    return new Uint8Array(readFileSync(path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(code === 'ENOENT' ? `${what} file not found: ${path}` : `cannot read ${what} file ${path}: ${code ?? (error as Error).message}`);
  }
}

/** `import`: the world to stdout (or --out), the report to stderr; exit 1 with the report and every issue when refused. */
function importCommand(path: string, out: string | undefined): void {
  const result = importWorld(readBytes(path, 'import'), { fallbackName: basename(path, extname(path)) });
  if (result.report) for (const line of reportLines(result.report)) process.stderr.write(`${line}\n`);
  if (!result.ok) {
    process.stderr.write(`refused: ${result.issues.length} issue${result.issues.length === 1 ? '' : 's'}\n`);
    for (const issue of result.issues) process.stderr.write(`${issue.path || '$'}: ${issue.message}\n`);
    process.exitCode = 1;
    return;
  }
  const text = `${JSON.stringify(result.world, null, 2)}\n`;
  if (out) {
    try {
      writeFileSync(out, text);
    } catch (error) {
      throw new CliError(`cannot write ${out}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  } else process.stdout.write(text);
}

/**
 * `export`: the world as a SillyTavern V3 card. `out.png` writes the picture (`--image`, resized
 * to at most 1024 × 1536, else a PNG `--source`'s own picture as it is, else a plain one) with the
 * card in `ccv3` and its V2 copy in `chara`; `out.json` writes the V3 card as JSON. With `--source`
 * (the card the world was imported from), that card is written again with the world's edits merged
 * in (issue 49). Prints what went where, and what a card cannot hold, to stderr.
 */
async function exportCommand(path: string, out: string, image: string | undefined, sourcePath: string | undefined): Promise<void> {
  const world = loadWorld(path);
  const png = /\.png$/i.test(out);
  if (!png && !/\.json$/i.test(out)) throw new CliError(`--card must name a .png or .json file: ${out}`);
  const sourceBytes = sourcePath ? readBytes(sourcePath, 'source card') : null;
  const source = sourceBytes ? importWorld(sourceBytes) : null;
  if (source && !(source.ok && source.cardSource)) throw new CliError(`--source ${sourcePath ?? ''} is not a character card that can be imported`);
  const { card, fields, bookEntries, unwritten } = exportCard(world, { source: source?.ok ? source.cardSource : null });
  let bytes: Uint8Array;
  if (png) {
    let picture: Uint8Array;
    try {
      picture = image
        ? (await cardPicturePng(readBytes(image, 'image'))).bytes
        : sourceBytes && isPng(sourceBytes)
          ? pngWithoutText(sourceBytes, ['chara', 'ccv3'])
          : await placeholderCardPng();
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw new CliError(`--image ${image ?? ''} is not a picture that can be read: ${(error as Error).message}`);
    }
    bytes = cardPng(picture, card);
  } else bytes = new TextEncoder().encode(`${JSON.stringify(card, null, 2)}\n`);
  try {
    writeFileSync(out, bytes);
  } catch (error) {
    throw new CliError(`cannot write ${out}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  process.stderr.write(`export: ${world.name} → SillyTavern chara_card_v3${png ? ' (png, with a chara_card_v2 copy)' : ''} ${out}\n`);
  for (const [field, ids] of Object.entries(fields)) if (ids.length > 0) process.stderr.write(`${field}: ${ids.join(', ')}\n`);
  process.stderr.write(`character_book: ${bookEntries.length} entr${bookEntries.length === 1 ? 'y' : 'ies'}${bookEntries.length ? ` (${bookEntries.join(', ')})` : ''}\n`);
  for (const line of unwritten) process.stderr.write(`not in the card: ${line}\n`);
  process.stderr.write(`extensions.yumina: the whole world (variables, rules, reactions, interface, music, settings), for importing it back here\n`);
}

function printIssues(issues: readonly Issue[]): void {
  process.stdout.write(`invalid: ${issues.length} issue${issues.length === 1 ? '' : 's'}\n`);
  for (const issue of issues) process.stdout.write(`${issue.path || '$'}: ${issue.message}\n`);
}

function loadState(path: string | undefined): Partial<WorldState> | null {
  if (!path) return null;
  const state = readJson(path, 'state');
  if (typeof state !== 'object' || state === null || Array.isArray(state)) throw new CliError(`state file ${path} must hold a JSON object`);
  const record = state as Record<string, unknown>;
  // A bare map of variable values is accepted as well as a full state.
  return ('variables' in record ? record : { variables: record }) as Partial<WorldState>;
}

function loadHistory(path: string | undefined): HistoryMessage[] {
  if (!path) return [];
  const history = readJson(path, 'history');
  const valid =
    Array.isArray(history) &&
    history.every(
      (message) =>
        typeof message === 'object' &&
        message !== null &&
        ['user', 'assistant', 'system'].includes((message as Record<string, unknown>).role as string) &&
        typeof (message as Record<string, unknown>).content === 'string',
    );
  if (!valid) throw new CliError(`history file ${path} must be a JSON array of {role: user|assistant|system, content: string}`);
  return history as HistoryMessage[];
}

function session(values: Record<string, unknown>) {
  const now = typeof values.now === 'string' ? values.now : new Date().toISOString();
  if (Number.isNaN(Date.parse(now))) throw new CliError(`--now is not an ISO time: ${now}`);
  const seed = typeof values.seed === 'string' ? values.seed : '0';
  if (!/^-?\d+$/.test(seed)) throw new CliError(`--seed must be an integer: ${seed}`);
  return { now, seed: Number(seed), sessionId: typeof values.session === 'string' ? values.session : 'cli' };
}

function run(argv: string[]): void | Promise<void> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') throw new CliError(USAGE);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: {
        state: { type: 'string' },
        history: { type: 'string' },
        user: { type: 'string' },
        reply: { type: 'string' },
        seed: { type: 'string' },
        now: { type: 'string' },
        session: { type: 'string' },
        out: { type: 'string' },
        card: { type: 'string' },
        image: { type: 'string' },
        source: { type: 'string' },
      },
    });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${USAGE}`);
  }
  const { values, positionals } = parsed;
  const worldPath = positionals[0];
  if (command === 'import') {
    if (!worldPath || positionals.length > 1) throw new CliError(`import needs exactly one file\n${USAGE}`);
    importCommand(worldPath, values.out as string | undefined);
    return;
  }
  if (command === 'export') {
    if (!worldPath || positionals.length > 1) throw new CliError(`export needs exactly one world file\n${USAGE}`);
    if (typeof values.card !== 'string') throw new CliError(`export needs --card <out.png|out.json>\n${USAGE}`);
    return exportCommand(worldPath, values.card, values.image as string | undefined, values.source as string | undefined);
  }
  if (command === 'action') {
    if (!worldPath || positionals.length !== 2) throw new CliError(`action needs a world file and an action id\n${USAGE}`);
  } else if (!worldPath || positionals.length > 1) throw new CliError(`${command} needs exactly one world file\n${USAGE}`);

  if (command === 'validate') {
    const { warnings } = loadWorldWithWarnings(worldPath);
    process.stdout.write('valid\n');
    for (const warning of warnings) process.stdout.write(`warning ${warning.path || '$'}: ${warning.message}\n`);
    return;
  }
  if (command !== 'turn' && command !== 'prompt' && command !== 'action') throw new CliError(`unknown command "${command}"\n${USAGE}`);
  if (command === 'turn' && (typeof values.user !== 'string' || typeof values.reply !== 'string')) throw new CliError(`turn needs --user and --reply\n${USAGE}`);
  const state = loadState(values.state as string | undefined);
  const history = loadHistory(values.history as string | undefined);
  const options = session(values);
  const definition = loadWorld(worldPath);

  if (command === 'action') {
    const actionId = positionals[1] as string;
    const result = dispatchEvents(definition, state ?? startSession(definition, options).state, [{ type: 'action', actionId }], options);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  if (command === 'prompt') {
    // A fresh state starts a session: its greeting opens the history and session-start effects apply.
    const fresh = state === null && history.length === 0 ? startSession(definition, options) : null;
    const opening: HistoryMessage[] = fresh?.greetings[0] ? [{ role: 'assistant', content: fresh.greetings[0] }] : [];
    const messages = [...opening, ...history, ...(typeof values.user === 'string' ? [{ role: 'user' as const, content: values.user }] : [])];
    const prompt = assemblePrompt(definition, fresh?.state ?? state, { ...options, history: messages });
    process.stdout.write(
      `${JSON.stringify(
        {
          messages: prompt.messages,
          cacheBreakpointIndex: prompt.cacheBreakpointIndex,
          firedEntries: prompt.firedEntries,
          droppedEntries: prompt.droppedEntries,
          skippedEntries: prompt.skippedEntries,
          droppedHistory: prompt.droppedHistory,
          tokenCount: prompt.tokenCount,
        },
        null,
        2,
      )}\n`,
    );
    return;
  }
  const userMessage = values.user as string;
  const prompt = assemblePrompt(definition, state, { ...options, history: [...history, { role: 'user', content: userMessage }] });
  const result = runTurn(definition, state, { ...options, userMessage, aiReply: values.reply as string, skippedEntries: prompt.skippedEntries });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

try {
  await run(process.argv.slice(2));
} catch (error) {
  if (error instanceof InvalidWorldError) {
    printIssues(error.issues);
    process.exitCode = 1;
  } else if (error instanceof CliError) {
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`error: ${(error as Error).message}\n`);
    process.exitCode = 2;
  }
}
