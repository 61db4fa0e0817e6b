import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort, sharedRedisUrl, testPrefix } from './redis.ts';

const root = resolve(import.meta.dirname, '../..');

/** What scripts/topology.ts prints once ready: the router's URL, the replicas (id, URL, pid), the partner site, the function processes. */
export interface TopologyReady {
  url: string;
  replicas: { id: string; url: string; pid: number }[];
  partner: string;
  functions: { function: string; pattern: string; pid: number }[];
}

export interface Topology {
  ready: TopologyReady;
  child: ChildProcess;
  /** What the topology printed so far (for a failure's message). */
  output(): string;
  /** SIGTERM, then SIGKILL to whatever replica is still running after 15 s. */
  stop(): Promise<void>;
}

/**
 * The local production topology (scripts/topology.ts: two container-mode replicas of the compiled
 * output, the functions, the static web build, one router) on the test's PostgreSQL database and
 * the shared Redis under a key prefix of its own. `dataDir` stands for the object bucket both
 * replicas share; mail lands in `outbox`. `env` is added to the replicas' settings.
 */
export async function startTopology(options: { databaseUrl: string; dataDir: string; outbox: string; env?: Record<string, string> }): Promise<Topology> {
  let output = '';
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'scripts/topology.ts')], {
    cwd: root,
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      REDIS_URL: sharedRedisUrl,
      REDIS_KEY_PREFIX: testPrefix(),
      TOPOLOGY_PORT: String(await freePort()),
      TOPOLOGY_DATA_DIR: options.dataDir,
      MAIL_OUTBOX_DIR: options.outbox,
      // The fake provider listens on loopback, which container mode refuses by default (docs/SECURITY.md).
      AI_PRIVATE_NETWORK_ACCESS: 'allow',
      SIGNUP_RATE_LIMIT_PER_HOUR: '1000',
      PASSWORD_HASH_RATE_LIMIT_PER_MINUTE: '1000',
      LOG_LEVEL: 'error',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const ready = await new Promise<TopologyReady>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`topology not ready: ${output}`)), 150_000);
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const line = output.split('\n').find((l) => l.includes('"topology.ready"'));
      if (line) {
        clearTimeout(timer);
        done(JSON.parse(line) as TopologyReady);
      }
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => fail(new Error(`topology exited (${code}): ${output}`)));
  });
  return {
    ready,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      for (const r of ready.replicas) {
        try {
          process.kill(r.pid, 'SIGKILL');
        } catch {}
      }
    },
  };
}
