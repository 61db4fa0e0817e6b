import type { Store } from '@yumina/store';

/**
 * Stale-request detection for generation (seed 001 §4, §7): the most recent run and board an
 * account has spoken from are current; a run or board that was replaced is stale from then on, and
 * a request id is accepted once. Kept in the shared store (Redis, or memory as fallback) and only
 * updated while the account's single generation slot is held, so checks do not race.
 */

const RETIRED_KEEP = 64;
const SCOPE_TTL_S = 24 * 3600;
const REQUEST_TTL_S = 3600;

interface ScopeRecord {
  run: string | null;
  board: string | null;
  retiredRuns: string[];
  retiredBoards: string[];
}

export type ScopeVerdict = 'current' | 'stale-run' | 'stale-board' | 'repeated-request';

const scopeKey = (accountId: string) => `companion:scope:${accountId}`;
const requestKey = (accountId: string, requestId: string) => `companion:request:${accountId}:${requestId}`;

async function load(store: Store, accountId: string): Promise<ScopeRecord> {
  const raw = await store.get(scopeKey(accountId));
  if (raw) {
    try {
      return JSON.parse(raw) as ScopeRecord;
    } catch {
      // unreadable: start again
    }
  }
  return { run: null, board: null, retiredRuns: [], retiredBoards: [] };
}

const keep = (list: string[], item: string) => [...list.filter((x) => x !== item), item].slice(-RETIRED_KEEP);

/** Checks the ids of a new generation request and, when current, makes its run and board the current ones. */
export async function claimScope(store: Store, accountId: string, ids: { requestId: string; runId: string; boardId: string }): Promise<ScopeVerdict> {
  const scope = await load(store, accountId);
  const board = `${ids.runId}/${ids.boardId}`;
  if (scope.retiredRuns.includes(ids.runId)) return 'stale-run';
  if (scope.retiredBoards.includes(board)) return 'stale-board';
  if (await store.get(requestKey(accountId, ids.requestId))) return 'repeated-request';
  let next = scope;
  if (scope.run !== null && scope.run !== ids.runId) next = { ...next, retiredRuns: keep(next.retiredRuns, scope.run) };
  if (scope.board !== null && scope.board !== board) next = { ...next, retiredBoards: keep(next.retiredBoards, scope.board) };
  next = { ...next, run: ids.runId, board };
  await store.set(scopeKey(accountId), JSON.stringify(next), SCOPE_TTL_S);
  await store.set(requestKey(accountId, ids.requestId), '1', REQUEST_TTL_S);
  return 'current';
}

/** Whether the run and board are still the current ones (re-checked after the model answered). */
export async function scopeStillCurrent(store: Store, accountId: string, ids: { runId: string; boardId: string }): Promise<boolean> {
  const scope = await load(store, accountId);
  return scope.run === ids.runId && scope.board === `${ids.runId}/${ids.boardId}`;
}
