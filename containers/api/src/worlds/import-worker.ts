import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { type ImportJob, type ImportJobResult, runImportJob, transferablesOf } from './import-job.ts';

/**
 * A worker thread of the import pool (import-pool.ts): runs one job per message and answers with
 * its result, moving the file's buffers back rather than copying them. A job that throws answers
 * `{kind: 'failed'}` with the message; the pool turns that into a 500 (a bug, not the client's).
 */
if (!parentPort) throw new Error('import-worker.ts runs as a worker thread');
// On Linux a thread has its own nice value, and setpriority(0) sets the calling thread's: this
// worker yields the cores to the server's event loop when both want them. (Elsewhere it would
// renice the whole process, so it is left alone.)
if (process.platform === 'linux') {
  try {
    setPriority(10);
  } catch {}
}
const port = parentPort;
port.on('message', (message: { id: number; job: ImportJob }) => {
  runImportJob(message.job).then(
    (result: ImportJobResult) => port.postMessage({ id: message.id, result }, transferablesOf(result)),
    (error: unknown) => port.postMessage({ id: message.id, failed: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
