import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { chunksOf, type ImportJob, type ImportJobResult, jobLength, runImportJob } from './import-job.ts';

/**
 * Imports off the event loop (issue 31): a job of more than `inlineBytes` runs in a worker thread,
 * so a 16 MB card never stalls the server; a small one (most JSON worlds and cards) runs inline,
 * where a worker's message round trip would cost more than the job. The workers start on first
 * use and stay (unreferenced: they never keep the process alive); `size` of them, one fewer than
 * the cores (at least one), take jobs in arrival order. At most `maxQueued` jobs wait; beyond
 * that `run` throws ImportPoolBusy at once (the route answers 503 with Retry-After), never after
 * waiting. A worker that dies is replaced and its job fails.
 */

export class ImportPoolBusy extends Error {
  readonly code = 'IMPORT_BUSY';
}

interface Pending {
  id: number;
  job: ImportJob;
  resolve(result: ImportJobResult): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  current: Pending | null;
}

export interface ImportPoolOptions {
  size?: number;
  maxQueued?: number;
  inlineBytes?: number;
}

export class ImportPool {
  readonly size: number;
  readonly maxQueued: number;
  readonly inlineBytes: number;
  #slots: Slot[] = [];
  #queue: Pending[] = [];
  #nextId = 1;
  #closed = false;

  constructor(options: ImportPoolOptions = {}) {
    this.size = options.size ?? Math.max(1, Math.min(4, availableParallelism() - 1));
    this.maxQueued = options.maxQueued ?? 16;
    this.inlineBytes = options.inlineBytes ?? 64 * 1024;
  }

  /** Jobs running or waiting in workers. */
  get busy(): number {
    return this.#queue.length + this.#slots.filter((slot) => slot.current).length;
  }

  run(job: ImportJob): Promise<ImportJobResult> {
    if (this.#closed) return Promise.reject(new Error('the import pool is closed'));
    if (jobLength(job) <= this.inlineBytes) return runImportJob(job);
    if (this.#queue.length >= this.maxQueued) return Promise.reject(new ImportPoolBusy('Too many imports are running on this server; try again in a moment.'));
    return new Promise<ImportJobResult>((resolve, reject) => {
      this.#queue.push({ id: this.#nextId++, job, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      let slot = this.#slots.find((candidate) => candidate.current === null);
      if (!slot && this.#slots.length < this.size) slot = this.#spawn();
      if (!slot) return;
      const pending = this.#queue.shift()!;
      slot.current = pending;
      // The body's bytes (or chunks) move to the worker (a copy first of any that share a buffer with other data).
      const owned = (bytes: Uint8Array) => (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer ? bytes : bytes.slice());
      const chunks = chunksOf(pending.job).map(owned);
      slot.worker.postMessage({ id: pending.id, job: { ...pending.job, bytes: chunks } }, chunks.map((chunk) => chunk.buffer as ArrayBuffer));
    }
  }

  #spawn(): Slot {
    const worker = new Worker(new URL('./import-worker.mjs', import.meta.url));
    worker.unref();
    const slot: Slot = { worker, current: null };
    worker.on('message', (message: { id: number; result?: ImportJobResult; failed?: string }) => {
      const pending = slot.current;
      if (!pending || pending.id !== message.id) return;
      slot.current = null;
      if (message.result) pending.resolve(message.result);
      else pending.reject(new Error(`import failed in its worker: ${message.failed ?? 'no result'}`));
      this.#dispatch();
    });
    const lost = (error: Error) => {
      this.#slots = this.#slots.filter((other) => other !== slot);
      const pending = slot.current;
      slot.current = null;
      pending?.reject(error);
      if (!this.#closed) this.#dispatch();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the import worker exited (code ${code})`)));
    this.#slots.push(slot);
    return slot;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const pending of this.#queue.splice(0)) pending.reject(new Error('the import pool is closed'));
    await Promise.all(this.#slots.map((slot) => slot.worker.terminate()));
    this.#slots = [];
  }
}
