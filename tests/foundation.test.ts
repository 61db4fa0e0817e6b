import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { withDeadline } from '@yumina/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from './support/redis.ts';
import { Browser, startTestServer, type TestServer } from './support/server.ts';
import { signUp as signUpAccount } from './support/sign-up.ts';

const root = resolve(import.meta.dirname, '..');
const tsx = join(root, 'node_modules/.bin/tsx');
const main = join(root, 'containers/api/src/main.ts');

/** Environment of a "fresh clone": none of the service variables set. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const key of ['DATABASE_URL', 'DATABASE_READ_URL', 'REDIS_URL', 'CI', 'VITEST', 'NODE_ENV']) delete env[key];
  return { ...env, ...extra };
}

function startProcess(env: NodeJS.ProcessEnv): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', main], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  return { child, output: () => out };
}

async function waitFor(url: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const r = await fetch(url);
      if (r.ok) return;
    } catch {}
    if (Date.now() > until) throw new Error(`${url} did not answer within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((r) => child.once('exit', (code) => r(code)));
}

describe('configuration is validated at start', () => {
  it('a bad value exits at once with one line naming the variable', () => {
    const run = spawnSync(tsx, [main], { cwd: root, env: cleanEnv({ DATABASE_QUERY_TIMEOUT_MS: 'abc' }), encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/DATABASE_QUERY_TIMEOUT_MS/);
    expect(lines[0]).toMatch(/"abc"/);
  });

  it('refuses a CPU profile above 180 seconds at start', () => {
    const run = spawnSync(tsx, [main], { cwd: root, env: cleanEnv({ RUNTIME_CPU_PROFILE_SECONDS: '181' }), encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/RUNTIME_CPU_PROFILE_SECONDS.*at most 180/);
  });

  it('refuses an out-of-range pool cap', () => {
    const run = spawnSync(tsx, [main], { cwd: root, env: cleanEnv({ DATABASE_POOL_MAX: '101' }), encoding: 'utf8', timeout: 30_000 });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/DATABASE_POOL_MAX/);
  });
});

describe('npm start on embedded defaults (no DATABASE_URL, no REDIS_URL)', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-embedded-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('serves GET / and the API on PGlite and the memory store; a row written before a restart is there after it; SIGTERM exits cleanly', async () => {
    const port = await freePort();
    // A web build directory that does not exist yet: the first start builds the web shell into it.
    const webDist = join(dataDir, 'web-dist');
    const env = cleanEnv({ PORT: String(port), DATA_DIR: dataDir, HOST: '127.0.0.1', WEB_DIST: webDist });
    const base = `http://127.0.0.1:${port}`;

    const first = startProcess(env);
    await waitFor(`${base}/api/version`, 150_000);
    expect(first.output()).toMatch(/Building the web app \(first start\)/);
    expect(existsSync(join(webDist, 'index.html'))).toBe(true);
    expect(first.output()).toMatch(/embedded PGlite/);
    expect(first.output()).toMatch(/Shared store: in-memory/);
    const home = await fetch(`${base}/`);
    expect(home.status).toBe(200);
    expect(home.headers.get('content-type')).toMatch(/text\/html/);
    expect(await home.text()).toMatch(/<div id="root">/);

    const email = `restart-${Date.now()}@example.com`;
    const player = new Browser(base);
    const signUp = await signUpAccount({ url: base, dataDir }, player, { email, password: 'survives restarts' });
    expect(signUp.status).toBe(201);
    const { account } = signUp as { account: { id: string } };

    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);
    expect(first.output()).toMatch(/"type":"shutdown"/);

    const second = startProcess(env);
    try {
      await waitFor(`${base}/api/version`, 60_000);
      expect(second.output()).not.toMatch(/Building the web app/); // the build is there now
      const again = new Browser(base);
      const login = await again.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'survives restarts' } });
      expect(login.status).toBe(200);
      expect(((await login.json()) as { account: { id: string } }).account.id).toBe(account.id);
    } finally {
      second.child.kill('SIGTERM');
      expect(await exited(second.child)).toBe(0);
    }
  }, 240_000);
});

describe('the container on real PostgreSQL and Redis', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.stop());

  it('(h) a route whose query hits its deadline answers 503 with the refresh-and-check message', async () => {
    // A second app on the same context, so a test-only route can be added before it is ready.
    const { buildApp } = await import('../containers/api/src/app.ts');
    const app = await buildApp(server.ctx, { web: false });
    app.get('/api/test/slow', () => withDeadline(150, () => server.ctx.db.primary.query('select pg_sleep(2)')));
    const res = await app.inject({ method: 'GET', url: '/api/test/slow' });
    expect(res.statusCode).toBe(503);
    const body = res.json() as { error: { code: string; message: string } };
    expect(body.error.code).toBe('DB_QUERY_TIMEOUT');
    expect(body.error.message).toMatch(/refresh/i);
    expect(body.error.message).toMatch(/check/i);
    await app.close();
  });

  it('logs say which database and store are in use; PostgreSQL and Redis here', () => {
    expect(server.ctx.db.kind).toBe('postgres');
    expect(server.ctx.store.kind).toBe('redis');
  });

  it('graceful shutdown drains an in-flight request and then refuses new connections', async () => {
    const local = await startTestServer();
    const { buildApp } = await import('../containers/api/src/app.ts');
    const app = await buildApp(local.ctx, { web: false });
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    app.get('/api/test/slow-ok', async () => {
      started();
      await new Promise((r) => setTimeout(r, 500));
      return { done: true };
    });
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const pending = fetch(`${address}/api/test/slow-ok`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await inFlight;
    const closing = app.close();
    const answer = await pending;
    expect(answer).toEqual({ status: 200, body: { done: true } });
    await closing;
    await expect(fetch(`${address}/api/version`)).rejects.toThrow();
    await local.stop();
  });
});
