import { createHash } from 'node:crypto';
import type { Queryable } from '@yumina/db';

/**
 * How "what was sent" for a reply is kept so that a session's stored prompts grow with the
 * session, not with its square (issue 51, point 7; migration 170).
 *
 * Before (migration 096, record version 1) every reply's row held the prompt whole: the lore,
 * system and persona text again, and one `{role, step, source: 'history', content: null}` place
 * for every conversation message sent, so a 2,000-message session wrote 2,000 places on its next
 * reply. Now (version 2):
 * - every text longer than {@link INLINE_TEXT} characters is kept once per session in
 *   chat_prompt_texts, keyed by its hash, and the record names the hash (lore that fires on every
 *   turn is stored once, not once a turn);
 * - the conversation's places are kept as runs: `[firstRole, count, alternating]` (a story that
 *   alternates player and reply is one run, whatever its length);
 * - the fired and skipped entries are a text like any other (the same list turn after turn is
 *   stored once).
 * Reading rebuilds the version-1 record exactly ({@link unpackPrompt}). Version-2 records live in
 * their own table (chat_prompt_records), so a release that knows only chat_prompts, still running
 * during a rolling deploy, finds no record there rather than one it cannot read; version-1 rows
 * stay readable as they are (expand/contract, docs/OPERATIONS.md: nothing rewrites them).
 */

/** Texts up to this length stay in the record itself (a hash would be no shorter). */
export const INLINE_TEXT = 48;

type Role = 'system' | 'user' | 'assistant';

/** One message of a kept prompt as the "what was sent" view shows it. */
export interface KeptPromptMessage {
  role: Role;
  step: number;
  source: string;
  content: string | null;
}

/** The version-1 record (what the view answers): any fields, with these. */
export interface KeptPrompt {
  messages: KeptPromptMessage[];
  firedEntries: unknown;
  skippedEntries: unknown;
  [field: string]: unknown;
}

/** A text by reference (`t`: its hash) or in place (`c`). */
type TextRef = { t: string } | { c: string | null };
/** A run of conversation places (step 10, source `history`, content null). */
type HistoryRun = [role: 'u' | 'a' | 's', count: number, alternating: 0 | 1];
type PackedMessage = ({ r: Role; s: number; src: string } & TextRef) | { h: HistoryRun[] };

export interface PackedPrompt {
  v: 2;
  /** The record's other fields (model, builtAt, counts), as they were. */
  rest: Record<string, unknown>;
  m: PackedMessage[];
  f: TextRef;
  k: TextRef;
}

const textHash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32);
const roleCode = { user: 'u', assistant: 'a', system: 's' } as const;
const roleOfCode = { u: 'user', a: 'assistant', s: 'system' } as const;
const other = (r: Role): Role => (r === 'user' ? 'assistant' : r === 'assistant' ? 'user' : 'system');

/** A conversation's places as runs, each the longer of an alternating or a same-role stretch. */
export function historyRuns(roles: readonly Role[]): HistoryRun[] {
  const runs: HistoryRun[] = [];
  let i = 0;
  while (i < roles.length) {
    const first = roles[i]!;
    let alt = 1;
    while (i + alt < roles.length && first !== 'system' && roles[i + alt] === (alt % 2 ? other(first) : first)) alt++;
    let same = 1;
    while (i + same < roles.length && roles[i + same] === first) same++;
    const useAlt = alt >= same;
    runs.push([roleCode[first], useAlt ? alt : same, useAlt ? 1 : 0]);
    i += useAlt ? alt : same;
  }
  return runs;
}

function rolesOfRuns(runs: readonly HistoryRun[]): Role[] {
  const roles: Role[] = [];
  for (const [code, count, alternating] of runs) {
    const first = roleOfCode[code];
    for (let n = 0; n < count; n++) roles.push(alternating && n % 2 ? other(first) : first);
  }
  return roles;
}

/**
 * The record of a prompt to store, and the texts it names: JSON text `{ record, texts }` that the
 * turn's write splits (its `record` into chat_prompts, its `texts` into chat_prompt_texts).
 */
export function packPrompt(prompt: { messages: readonly KeptPromptMessage[]; firedEntries: unknown; skippedEntries: unknown }): string {
  const texts = new Map<string, string>();
  const ref = (text: string | null): TextRef => {
    if (text === null || text.length <= INLINE_TEXT) return { c: text };
    const t = textHash(text);
    texts.set(t, text);
    return { t };
  };
  const m: PackedMessage[] = [];
  let pending: Role[] = [];
  const flush = () => {
    if (pending.length) m.push({ h: historyRuns(pending) });
    pending = [];
  };
  for (const message of prompt.messages) {
    if (message.source === 'history' && message.step === 10 && message.content === null) {
      pending.push(message.role);
      continue;
    }
    flush();
    m.push({ r: message.role, s: message.step, src: message.source, ...ref(message.content) });
  }
  flush();
  const { messages: _m, firedEntries, skippedEntries, ...rest } = prompt;
  const record: PackedPrompt = { v: 2, rest: rest as Record<string, unknown>, m, f: ref(JSON.stringify(firedEntries ?? null)), k: ref(JSON.stringify(skippedEntries ?? null)) };
  return JSON.stringify({ record, texts: [...texts] });
}

const isPacked = (record: unknown): record is PackedPrompt => typeof record === 'object' && record !== null && (record as { v?: unknown }).v === 2;

/** The hashes a stored record names (none for a version-1 record). */
export function promptTextHashes(record: unknown): string[] {
  if (!isPacked(record)) return [];
  const out = new Set<string>();
  const add = (r: TextRef) => {
    if ('t' in r) out.add(r.t);
  };
  for (const message of record.m) if (!('h' in message)) add(message);
  add(record.f);
  add(record.k);
  return [...out];
}

/** The version-1 record a stored one stands for: a version-1 record as it is; a version-2 one rebuilt from its texts. */
export function unpackPrompt(record: unknown, texts: ReadonlyMap<string, string>): KeptPrompt {
  if (!isPacked(record)) return record as KeptPrompt;
  const text = (r: TextRef): string | null => {
    if ('c' in r) return r.c;
    const found = texts.get(r.t);
    if (found === undefined) throw new Error(`a stored prompt names text ${r.t}, which is not kept`);
    return found;
  };
  const messages: KeptPromptMessage[] = [];
  for (const message of record.m) {
    if ('h' in message) for (const role of rolesOfRuns(message.h)) messages.push({ role, step: 10, source: 'history', content: null });
    else messages.push({ role: message.r, step: message.s, source: message.src, content: text(message) });
  }
  return {
    ...record.rest,
    messages,
    firedEntries: JSON.parse(text(record.f) ?? 'null') as unknown,
    skippedEntries: JSON.parse(text(record.k) ?? 'null') as unknown,
  };
}

/** A stored record read back whole (its texts from chat_prompt_texts), as the view shows it. */
export async function readKeptPrompt(db: Queryable, sessionId: string, record: unknown): Promise<KeptPrompt> {
  const hashes = promptTextHashes(record);
  const texts = new Map<string, string>();
  if (hashes.length) {
    const { rows } = await db.query<{ hash: string; body: string }>(
      `select encode(hash, 'hex') as hash, body from chat_prompt_texts where session_id = $1 and hash = any($2::bytea[])`,
      [sessionId, hashes.map((h) => `\\x${h}`)],
    );
    for (const row of rows) texts.set(row.hash, row.body);
  }
  return unpackPrompt(record, texts);
}

/**
 * The statement parts that store a packed prompt (JSON text parameter `param`, from
 * {@link packPrompt}) for reply `messageId` of session `sessionId` when `guard` holds: CTEs of a
 * turn's write. The record goes to chat_prompt_records (migration 170); a version-1 row an older
 * release kept for the same reply (before a regeneration) is removed with it.
 */
export function storePromptSql(param: string, messageId: string, sessionId: string, guard: string): string {
  return `sent as (insert into chat_prompt_records (message_id, record) select ${messageId}, (${param}::jsonb) -> 'record' where ${param}::text is not null and ${guard}
                        on conflict (message_id) do update set record = excluded.record, created_at = now()),
              sent_v1 as (delete from chat_prompts where message_id = ${messageId} and ${param}::text is not null and ${guard}),
              sent_texts as (insert into chat_prompt_texts (session_id, hash, body)
                             select ${sessionId}, decode(t ->> 0, 'hex'), t ->> 1 from jsonb_array_elements(coalesce((${param}::jsonb) -> 'texts', '[]'::jsonb)) t
                              where ${param}::text is not null and ${guard}
                             on conflict do nothing)`;
}
