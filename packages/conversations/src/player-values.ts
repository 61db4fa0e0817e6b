/**
 * Per-player values in a room (docs/ROOMS.md) are the state's `playerVariables`, by account id.
 * Each member sees only their own: every state a room answers or sends (the session's, a message's
 * snapshot, each alternative's) passes through `stateForViewer`, which keeps the viewer's entry and
 * drops the others'.
 */
export function stateForViewer<T>(state: T, accountId: string | null): T {
  if (!state || typeof state !== 'object') return state;
  const values = (state as { playerVariables?: Record<string, unknown> }).playerVariables;
  if (!values) return state;
  const own = accountId && Object.hasOwn(values, accountId) ? { [accountId]: values[accountId] } : {};
  return { ...state, playerVariables: own };
}

/** A message view's states (its snapshot and each alternative's) for one viewer. */
export function messageForViewer<M extends { stateSnapshot?: unknown; swipes?: readonly { snapshot?: unknown }[] }>(message: M, accountId: string | null): M {
  return {
    ...message,
    ...(message.stateSnapshot !== undefined ? { stateSnapshot: stateForViewer(message.stateSnapshot, accountId) } : {}),
    ...(message.swipes ? { swipes: message.swipes.map((swipe) => ({ ...swipe, snapshot: stateForViewer(swipe.snapshot, accountId) })) } : {}),
  };
}

/** State changes one viewer may see: a change of another player's own value is left out. */
export function changesForViewer(changes: readonly unknown[], accountId: string | null): unknown[] {
  return changes.filter((change) => {
    const target = change && typeof change === 'object' ? (change as { targetUserId?: unknown }).targetUserId : undefined;
    return target === undefined || target === accountId;
  });
}
