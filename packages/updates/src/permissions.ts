/** Publication states of a work (worlds.status). 'held' = held for review. */
export type WorldStatus = 'saved' | 'unpublished' | 'published' | 'held';

export interface WorkFacts {
  id: string;
  ownerId: string;
  status: WorldStatus;
  /** A publication or an edit of the work waits for review (world_reviews, state 'pending'). */
  pendingReview: boolean;
}

/** The signed-in account looking at a work; null for a guest. */
export interface Viewer {
  accountId: string;
  isAdmin: boolean;
}

export interface HistoryPermissions {
  /** True only for the work's author (an administrator who is not the author gets false). */
  canEdit: boolean;
  /** Whether a standalone record can be added now. */
  canCreate: boolean;
  /** Whether a new record may notify the players who favorited the work. */
  canNotify: boolean;
}

/** A pending review must be resolved before a standalone record is added (seed 001 §4.3). */
export function hasPendingReview(work: WorkFacts): boolean {
  return work.pendingReview || work.status === 'held';
}

/** Readers see published works; the author also sees unpublished ones. */
export function canView(work: WorkFacts, viewer: Viewer | null): boolean {
  return work.status === 'published' || isAuthor(work, viewer);
}

/** Authorship is ownership; being an administrator grants nothing here. */
export function isAuthor(work: WorkFacts, viewer: Viewer | null): boolean {
  return viewer !== null && viewer.accountId === work.ownerId;
}

export function historyPermissions(work: WorkFacts, viewer: Viewer | null): HistoryPermissions {
  const canEdit = isAuthor(work, viewer);
  const canCreate = canEdit && !hasPendingReview(work);
  return { canEdit, canCreate, canNotify: canCreate && work.status === 'published' };
}
