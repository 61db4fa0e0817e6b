import { parentPort } from 'node:worker_threads';
import { type ImportJob, type ImportJobResult, runImportJob, transferablesOf } from './import-job.ts';

/**
 * A worker thread of the import pool (import-pool.ts): runs one job per message and answers with
 * its result, moving the file's buffers back rather than copying them. A job that throws answers
 * `{kind: 'failed'}` with the message; the pool turns that into a 500 (a bug, not the client's).
 */
if (!parentPort) throw new Error('import-worker.ts runs as a worker thread');
const port = parentPort;
port.on('message', (message: { id: number; job: ImportJob }) => {
  runImportJob(message.job).then(
    (result: ImportJobResult) => port.postMessage({ id: message.id, result }, transferablesOf(result)),
    (error: unknown) => port.postMessage({ id: message.id, failed: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
});
