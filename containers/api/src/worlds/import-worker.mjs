// The import worker's entry, in plain JavaScript so that a worker thread can start it whatever
// loader the process runs under (production runs `node --import tsx`, the tests run vitest): it
// registers tsx in this thread, then loads the TypeScript worker (import-worker.ts).
import { register } from 'tsx/esm/api';

register();
await import('./import-worker.ts');
