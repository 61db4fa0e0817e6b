import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerSettings } from './support/container-settings.ts';
import { createTestDatabase, hasPostgres, type TestDatabase } from './support/postgres.ts';
import { freePort, hasRedis } from './support/redis.ts';
import { Browser } from './support/server.ts';

/**
 * The image without Docker: the final stage of containers/api/Dockerfile replayed on this machine.
 * Its COPY lines copy from a fresh copy of the repository (no node_modules), its RUN is the
 * production install (`npm ci --omit=dev`, preferring the local npm cache), and its CMD starts the
 * container in container mode on the real PostgreSQL and Redis.
 */
const root = resolve(import.meta.dirname, '..');
const dockerfile = readFileSync(join(root, 'containers/api/Dockerfile'), 'utf8');
const finalStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
const instructions = finalStage
  .split('\n')
  .filter((l) => /^[A-Z]+ /.test(l))
  .map((l) => ({ op: l.slice(0, l.indexOf(' ')), arg: l.slice(l.indexOf(' ') + 1).trim() }));
const execForm = (arg: string) => JSON.parse(arg.slice(arg.indexOf('['))) as string[];
const cmd = execForm(instructions.find((i) => i.op === 'CMD')!.arg);
const imageEnv = Object.fromEntries(
  instructions
    .filter((i) => i.op === 'ENV')
    .flatMap((i) => i.arg.split(/\s+/))
    .map((kv) => kv.split('=') as [string, string]),
);

describe.runIf(hasPostgres && hasRedis)('the production install runs the container (Dockerfile final stage)', () => {
  const app = mkdtempSync(join(tmpdir(), 'yumina-image-'));
  let database: TestDatabase;
  let server: ChildProcess | undefined;
  let url: string;
  let port: number;
  let stderr = '';
  const partners = JSON.stringify([{ slug: 'starfall', clientOrigin: 'https://play.starfall.example', issuer: 'https://platform.test', audience: 'starfall' }]);

  beforeAll(async () => {
    for (const { op, arg } of instructions) {
      if (op === 'COPY') {
        const tokens = arg.split(/\s+/);
        // --from=web: the web stage's build output, i.e. the web app the global setup built from this source.
        const fromStage = tokens[0]!.startsWith('--from=') ? tokens.shift() : undefined;
        const dest = tokens.pop()!;
        for (const src of tokens) {
          const source = fromStage ? join(root, src.replace(/^\/app\//, '')) : join(root, src);
          const target = dest.endsWith('/') ? join(app, dest, basename(src)) : join(app, dest);
          mkdirSync(dirname(target), { recursive: true });
          cpSync(source, target, { recursive: true, filter: (p) => p === source || !/[/\\](node_modules|dist|\.data)$/.test(p) });
        }
      }
      if (op === 'RUN') {
        const run = spawnSync('sh', ['-c', arg], { cwd: app, encoding: 'utf8', timeout: 300_000, env: { ...process.env, npm_config_prefer_offline: 'true', NODE_ENV: 'production' } });
        expect(run.status, run.stderr).toBe(0);
      }
    }
    database = await createTestDatabase();
    port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const { DATABASE_URL: _d, REDIS_URL: _r, ...outer } = process.env;
    server = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), {
      cwd: app,
      env: {
        PATH: outer.PATH,
        ...imageEnv,
        ...containerSettings('https://platform.test'),
        DATABASE_URL: database.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        PARTNERS: partners,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const until = Date.now() + 90_000;
    for (;;) {
      try {
        if ((await fetch(`${url}/health`)).status === 200) break;
      } catch {}
      if (server.exitCode !== null || Date.now() > until) throw new Error(`the container did not become healthy: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }, 420_000);

  afterAll(async () => {
    server?.kill('SIGKILL');
    await database?.drop();
    rmSync(app, { recursive: true, force: true });
  });

  it('installs no devDependency and needs none: /health 200, signup and login work, the landing page is served', async () => {
    for (const dev of ['vitest', 'vite', 'typescript', 'playwright-core', 'eslint']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    expect(existsSync(join(app, 'node_modules/tsx')) && existsSync(join(app, 'node_modules/sst'))).toBe(true);
    expect(imageEnv.APP_MODE).toBe('container');
    expect(finalStage).toMatch(/^USER node$/m); // not root

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('cache-control')).toBe('no-store');
    const version = (await (await fetch(`${url}/api/version`)).json()) as { mode: string };
    expect(version.mode).toBe('container');

    const email = `image-${Date.now()}@example.com`;
    const first = new Browser(url);
    const signup = await first.fetch('/api/auth/signup', { method: 'POST', json: { email, password: 'long enough pw', displayName: 'Ada' } });
    expect(signup.status).toBe(201);
    const second = new Browser(url);
    const login = await second.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'long enough pw' } });
    expect(login.status).toBe(200);
    const session = (await (await second.fetch('/api/auth/session')).json()) as { account: { displayName: string } | null };
    expect(session.account?.displayName).toBe('Ada');

    // Container mode registers the partner landing page (the router sends /<partner> here).
    const landing = await fetch(`${url}/starfall`);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('content-type')).toMatch(/text\/html/);
    expect(landing.headers.get('content-security-policy')).toMatch(/frame-src https:\/\/play\.starfall\.example/);
  });

  it('SIGTERM drains and exits 0', async () => {
    const exited = new Promise<number | null>((done) => server!.once('exit', (code) => done(code)));
    server!.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  }, 60_000);
});
