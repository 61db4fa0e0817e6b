// The import worker's entry when the server runs from source, in plain JavaScript so that a worker
// thread can start it whatever loader the process runs under (`npm start` runs tsx, the tests run
// vitest): it registers tsx in this thread, then loads the TypeScript worker (import-worker.ts).
// Production runs the compiled output, where `npm run build` puts the compiled worker under this
// name beside the bundle (scripts/build.ts).
import { register } from 'tsx/esm/api';

register();
await import('./import-worker.ts');
