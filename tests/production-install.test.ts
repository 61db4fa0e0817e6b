import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cardPng } from './support/card-png.ts';
import { containerSettings } from './support/container-settings.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres.ts';
import { freePort } from './support/redis.ts';
import { Browser } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * The image without Docker: the final stage of containers/api/Dockerfile replayed on this machine.
 * Its `COPY --from=build` lines copy the build stage's output, i.e. what `npm run build` made of
 * this source (the global setup runs the same build: web/dist and containers/api/dist); its other
 * COPY lines copy from the repository; its CMD starts the container in container mode on the real
 * PostgreSQL and Redis. The stage has no RUN: nothing is installed.
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

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));

describe('the image runs the compiled container (Dockerfile final stage)', () => {
  const app = mkdtempSync(join(tmpdir(), 'yumina-image-'));
  let database: TestDatabase;
  let server: ChildProcess | undefined;
  let url: string;
  let outbox: string;
  let stderr = '';
  const partners = JSON.stringify([{ slug: 'starfall', clientOrigin: 'https://play.starfall.example', issuer: 'https://platform.test', audience: 'starfall' }]);

  beforeAll(async () => {
    for (const { op, arg } of instructions) {
      expect(op, 'the final stage installs nothing').not.toBe('RUN');
      if (op !== 'COPY') continue;
      const tokens = arg.split(/\s+/);
      // --from=build: the build stage's output, i.e. what the global setup built from this source.
      const fromStage = tokens[0]!.startsWith('--from=') ? tokens.shift() : undefined;
      const dest = tokens.pop()!;
      for (const src of tokens) {
        const source = fromStage ? join(root, src.replace(/^\/app\//, '')) : join(root, src);
        expect(existsSync(source), `${src} (npm run build)`).toBe(true);
        const target = dest.endsWith('/') ? join(app, dest, basename(src)) : join(app, dest);
        mkdirSync(dirname(target), { recursive: true });
        cpSync(source, target, { recursive: true });
      }
    }
    database = await createTestDatabase();
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const settings = containerSettings('https://platform.test');
    outbox = settings.MAIL_OUTBOX_DIR!;
    server = spawn(cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), {
      cwd: app,
      env: {
        PATH: process.env.PATH,
        ...imageEnv,
        ...settings,
        DATABASE_URL: database.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        PARTNERS: partners,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const until = Date.now() + 60_000;
    for (;;) {
      try {
        if ((await fetch(`${url}/health`)).status === 200) break;
      } catch {}
      if (server.exitCode !== null || Date.now() > until) throw new Error(`the container did not become healthy: ${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }, 120_000);

  afterAll(async () => {
    server?.kill('SIGKILL');
    await database?.drop();
    rmSync(app, { recursive: true, force: true });
  });

  it('holds only compiled JavaScript and sharp’s native part, no installed dependencies and no loader; /health 200, signup and login work, the landing page is served, a card imports', async () => {
    const files = filesUnder(app);
    // The one thing beside the bundle that is not JavaScript of ours: sharp's prebuilt binary and libvips for this platform (scripts/build.ts).
    const modules = files.filter((f) => f.split('/').includes('node_modules'));
    expect(modules.length).toBeGreaterThan(0);
    for (const f of modules) expect(f).toMatch(/^containers\/api\/dist\/node_modules\/@img\/sharp-(libvips-)?[a-z0-9]+-[a-z0-9]+\//);
    expect(files.filter((f) => /\.(ts|tsx|mts|cts)$/.test(f))).toEqual([]);
    expect(cmd).toEqual(['node', 'containers/api/dist/main.mjs']); // no --import: no TypeScript loader
    expect(imageEnv.APP_MODE).toBe('container');
    expect(finalStage).toMatch(/^USER node$/m); // not root

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('cache-control')).toBe('no-store');
    const version = (await (await fetch(`${url}/api/version`)).json()) as { mode: string };
    expect(version.mode).toBe('container');

    const email = `image-${Date.now()}@example.com`;
    const first = new Browser(url);
    const signup = await signUp({ url, outbox }, first, { email, password: 'long enough pw', displayName: 'Ada' });
    expect(signup.status).toBe(201);
    const second = new Browser(url);
    const login = await second.fetch('/api/auth/login', { method: 'POST', json: { email, password: 'long enough pw' } });
    expect(login.status).toBe(200);
    const session = (await (await second.fetch('/api/auth/session')).json()) as { account: { displayName: string } | null };
    expect(session.account?.displayName).toBe('Ada');

    // A picture card over 64 KiB: decoded in the compiled import worker, its picture resized by sharp.
    const card = await cardPng({ bytes: 200_000 });
    const imported = await second.fetch('/api/worlds/import?name=card.png', { method: 'POST', headers: { 'content-type': 'image/png' }, body: card as Uint8Array<ArrayBuffer> });
    expect(imported.status, await imported.clone().text()).toBe(201);
    const { avatarUrl } = (await imported.json()) as { avatarUrl: string };
    const avatar = await second.fetch(avatarUrl);
    expect(avatar.status).toBe(200);
    expect(avatar.headers.get('content-type')).toBe('image/webp');

    // Container mode registers the partner landing page (the router sends /<partner> here) …
    const landing = await fetch(`${url}/starfall`);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('content-type')).toMatch(/text\/html/);
    expect(landing.headers.get('content-security-policy')).toMatch(/frame-src https:\/\/play\.starfall\.example/);
    // … and none of the functions' paths: those are Lambdas in production.
    expect((await fetch(`${url}/api/auth/jwks`)).status).toBe(404);
    expect((await fetch(`${url}/api/partners/starfall/config`)).status).toBe(404);
    expect((await second.fetch('/api/partners/starfall/token', { method: 'POST' })).status).toBe(404);
  });

  it('SIGTERM drains and exits 0', async () => {
    const exited = new Promise<number | null>((done) => server!.once('exit', (code) => done(code)));
    server!.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
  }, 60_000);
});
