import type { CompanionContext, CompanionPreferences, Notebook, NotebookMutation, WriteBase } from '@yumina/companion';
import { ApiError } from '../lib/api.ts';

/** Calls of the companion routes (seed 001 §4). Request ids are transient: made here, never saved. */

export interface CompanionConfig {
  accountId: string;
  enabled: boolean;
  provider: { configured: boolean; usable: boolean; privateEnabled: boolean };
  model: string | null;
  /** Stored per account: the same on a reload and on another device. */
  preferences: CompanionPreferences;
  settingsPath: string;
  modelBrowserPath: string;
  limits: { generationsPerMinute: number; messageMaxChars: number };
}

export interface GenerationReply {
  requestId: string;
  runId: string;
  boardId: string;
  reply: string;
  model: string;
  remembered: string | null;
  notebook: { saved: boolean; revision: number; epoch: number };
}

export type NotebookAnswer =
  | { ok: true; notebook: Notebook }
  | { ok: false; status: number; code: string; message: string; notebook: Notebook | null };

async function call<T>(path: string, init: { method?: string; json?: unknown; signal?: AbortSignal } = {}): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? (init.json === undefined ? 'GET' : 'POST'),
    headers: init.json === undefined ? {} : { 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    credentials: 'same-origin',
    signal: init.signal,
  });
  const body = (await res.json().catch(() => null)) as { error?: { code: string; message: string } } | null;
  if (!res.ok) throw new ApiError(res.status, body?.error?.code ?? 'HTTP_ERROR', body?.error?.message ?? `Request failed (${res.status})`);
  return body as T;
}

export const randomId = (): string => {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(36).padStart(2, '0')).join('').slice(0, 20);
};

export function loadConfig(): Promise<CompanionConfig> {
  return call<CompanionConfig>('/api/game/npc/companion/config');
}

export async function loadNotebook(): Promise<Notebook> {
  return (await call<{ notebook: Notebook }>('/api/game/npc/companion/notebook')).notebook;
}

export function generate(
  input: { accountId: string; runId: string; boardId: string; message: string; context: CompanionContext; model?: string; base?: WriteBase },
  signal: AbortSignal,
): Promise<GenerationReply> {
  return call<GenerationReply>('/api/game/npc/companion', {
    json: {
      accountId: input.accountId,
      requestId: randomId(),
      runId: input.runId,
      boardId: input.boardId,
      message: input.message,
      context: input.context,
      ...(input.model ? { model: input.model } : {}),
      ...(input.base ? { notebook: input.base } : {}),
    },
    signal,
  });
}

/** A notebook mutation; a 409 conflict answers with the current notebook so the panel can refresh. */
export async function mutateNotebook(base: WriteBase, mutation: Exclude<NotebookMutation, { op: 'turns' | 'statement' }>): Promise<NotebookAnswer> {
  const res = await fetch('/api/game/npc/companion/notebook', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ base, mutation }),
    credentials: 'same-origin',
  });
  const body = (await res.json().catch(() => null)) as { notebook?: Notebook; error?: { code: string; message: string } } | null;
  if (res.ok && body?.notebook) return { ok: true, notebook: body.notebook };
  return { ok: false, status: res.status, code: body?.error?.code ?? 'HTTP_ERROR', message: body?.error?.message ?? `Request failed (${res.status})`, notebook: body?.notebook ?? null };
}

/** Changes one or both companion switches for the account; answers with both as stored. */
export async function savePreferences(change: Partial<CompanionPreferences>): Promise<CompanionPreferences> {
  return (await call<{ preferences: CompanionPreferences }>('/api/game/npc/companion/preferences', { method: 'PUT', json: change })).preferences;
}
