import { type Notebook, type NotebookMutation, reapplicableMutation, type WriteBase } from '@yumina/companion';
import type { NotebookAnswer } from './companion-api.ts';

/**
 * The board's notebook writes, one after another (seed 001 §2.1 rule 2, §7). Each write names the
 * revision it was based on. When the server refuses it as outdated (409 with the current notebook),
 * an additive write (milestones, introduction markers, notes) is re-applied on the fresh revision;
 * a destructive one (reset, note removal) is not: the player sees the fresh notebook and decides
 * again. A write that fails (network, 5xx, 429) is retried with backoff and, when it still fails,
 * reported; the writes queued after it run regardless.
 */

export type WritableMutation = Exclude<NotebookMutation, { op: 'turns' | 'statement' }>;

export interface NotebookTransport {
  read(): Promise<Notebook>;
  /** Resolves with the server's answer; rejects only when no answer arrived (network). */
  write(base: WriteBase, mutation: WritableMutation): Promise<NotebookAnswer>;
}

export type WriteOutcome =
  | { status: 'applied'; notebook: Notebook }
  /** Refused as outdated and not re-applied (destructive, or re-applied too often). */
  | { status: 'conflict'; notebook: Notebook | null; message: string }
  /** Refused for what it is (400, 404, 413): retrying would not help. */
  | { status: 'refused'; message: string }
  /** No answer, or a 5xx/429, after every attempt. */
  | { status: 'failed'; message: string };

export interface NotebookWriterOptions {
  transport: NotebookTransport;
  /** The freshest notebook the page holds (null: not read yet). */
  current(): Notebook | null;
  /** Every notebook the server answered with. */
  onNotebook(notebook: Notebook): void;
  /** A write that did not apply, after its retries. */
  onProblem(outcome: Exclude<WriteOutcome, { status: 'applied' }>, mutation: WritableMutation): void;
  /** Attempts for one write when no answer arrives (default 4). */
  attempts?: number;
  /** First backoff delay; doubles every attempt (default 500 ms). */
  backoffMs?: number;
  /** How often an outdated additive write is re-applied on a fresh revision (default 3). */
  reapplyLimit?: number;
  sleep?(ms: number): Promise<void>;
}

const retryable = (status: number) => status === 429 || status >= 500;

export class NotebookWriter {
  #tail: Promise<unknown> = Promise.resolve();
  readonly #o: Required<Omit<NotebookWriterOptions, 'transport' | 'current' | 'onNotebook' | 'onProblem'>> & NotebookWriterOptions;

  constructor(options: NotebookWriterOptions) {
    this.#o = {
      attempts: 4,
      backoffMs: 500,
      reapplyLimit: 3,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ...options,
    };
  }

  /** Queues a write; resolves with its outcome once it and every write before it are done. */
  enqueue(mutation: WritableMutation): Promise<WriteOutcome> {
    const run = this.#tail.then(() => this.#run(mutation));
    // The queue goes on whatever this write's fate was.
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /** Resolves when every queued write is done. */
  idle(): Promise<void> {
    return this.#tail.then(() => undefined);
  }

  async #run(mutation: WritableMutation): Promise<WriteOutcome> {
    const outcome = await this.#attempt(mutation).catch((err: unknown): WriteOutcome => ({ status: 'failed', message: (err as Error).message }));
    if (outcome.status === 'applied') this.#o.onNotebook(outcome.notebook);
    else this.#o.onProblem(outcome, mutation);
    return outcome;
  }

  async #attempt(mutation: WritableMutation): Promise<WriteOutcome> {
    const o = this.#o;
    let notebook = o.current();
    let failures = 0;
    let reapplied = 0;
    let lastMessage = 'The notebook could not be reached.';
    for (;;) {
      let answer: NotebookAnswer | null = null;
      try {
        notebook ??= await o.transport.read();
        answer = await o.transport.write({ revision: notebook.revision, epoch: notebook.epoch }, mutation);
      } catch (err) {
        lastMessage = (err as Error).message || lastMessage;
      }
      if (answer?.ok) return { status: 'applied', notebook: answer.notebook };
      if (answer && answer.status === 409) {
        if (answer.notebook) o.onNotebook(answer.notebook);
        if (answer.notebook && reapplicableMutation(mutation) && reapplied < o.reapplyLimit) {
          // Re-read (the refusal carries the current notebook) and re-apply on it.
          reapplied++;
          notebook = answer.notebook;
          continue;
        }
        return { status: 'conflict', notebook: answer.notebook, message: answer.message };
      }
      if (answer && !retryable(answer.status)) return { status: 'refused', message: answer.message };
      if (answer) lastMessage = answer.message;
      failures++;
      if (failures >= o.attempts) return { status: 'failed', message: lastMessage };
      await o.sleep(o.backoffMs * 2 ** (failures - 1));
      // After an unanswered attempt the notebook may have moved on: an additive write reads it again
      // (re-applying it is idempotent); a destructive one keeps the revision the player decided on.
      if (reapplicableMutation(mutation)) notebook = null;
    }
  }
}
