/** A save chunk could not be read: truncated, or written by a newer format version. */
export class CompanionSaveChunkError extends Error {
  readonly code = 'COMPANION_SAVE_CHUNK_INVALID';
  constructor(
    readonly chunk: number,
    reason: string,
  ) {
    super(`Companion save chunk ${chunk} is unreadable: ${reason}`);
    this.name = 'CompanionSaveChunkError';
  }
}

/** A stored notebook did not have the expected shape. */
export class CompanionNotebookInvalidError extends Error {
  readonly code = 'COMPANION_NOTEBOOK_INVALID';
  constructor(reason: string) {
    super(`Stored companion notebook is invalid: ${reason}`);
    this.name = 'CompanionNotebookInvalidError';
  }
}
