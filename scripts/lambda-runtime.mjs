// The Lambda runtime's part on one machine: `node scripts/lambda-runtime.mjs <module> [export]`
// loads a function's module in this fresh process (its init, as a cold start does), then invokes
// its handler (export `handler` by default) with each event its parent sends over IPC, one
// process per function instance, as AWS runs one per execution environment. Plain JavaScript
// run by `node` alone, so it runs the compiled bundles (dist/functions/<folder>/handler.mjs)
// without any loader; `node --import tsx` runs a handler.ts the same way (today's tsx path, for
// the cold-start benchmark). The parent's side is scripts/function-process.ts.
//
// Messages: parent → {type: 'invoke', id, event}; child → {type: 'ready', initMs} once the module
// is loaded, {type: 'result', id, result} or {type: 'error', id, message} per event. A module that
// fails to load, or a handler that throws, prints its error as one line on stderr, as the Lambda
// runtime logs it; a failed load exits with status 1.
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [file, name = 'handler'] = process.argv.slice(2);
const oneLine = (error) => (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
const send = (message) => {
  if (process.connected) process.send(message);
};

if (!file || !process.send) {
  process.stderr.write('usage: node scripts/lambda-runtime.mjs <module> [export], forked with an IPC channel\n');
  process.exit(2);
}

const started = performance.now();
let handler;
try {
  handler = (await import(pathToFileURL(resolve(file)).href))[name];
  if (typeof handler !== 'function') throw new Error(`${file} has no export ${name}`);
} catch (error) {
  process.stderr.write(`${oneLine(error)}\n`);
  process.exit(1);
}

process.on('message', async (message) => {
  if (message?.type !== 'invoke') return;
  const deadline = Date.now() + 30_000;
  const context = { functionName: process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'local', awsRequestId: randomUUID(), getRemainingTimeInMillis: () => deadline - Date.now() };
  try {
    send({ type: 'result', id: message.id, result: await handler(message.event, context) });
  } catch (error) {
    process.stderr.write(`${oneLine(error)}\n`);
    send({ type: 'error', id: message.id, message: oneLine(error) });
  }
});
// The parent going away ends the instance.
process.once('disconnect', () => process.exit(0));
send({ type: 'ready', initMs: performance.now() - started });
