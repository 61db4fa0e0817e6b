import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CONTAINER_REQUIRED } from '@yumina/config';
import { describe, expect, it } from 'vitest';
import { containerSettings } from './support/container-settings.ts';

const root = resolve(import.meta.dirname, '..');

/** Starts the container's entry point (as the image does) and waits for it to exit. */
function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string; ms: number }> {
  const t0 = Date.now();
  const { DATABASE_URL: _d, REDIS_URL: _r, PUBLIC_ORIGIN: _p, SECRETS_KEY: _s, IDENTITY_SIGNING_KEY: _i, ...outer } = process.env;
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'containers/api/src/main.ts')], {
    cwd: root,
    env: { ...outer, DATA_DIR: mkdtempSync(join(tmpdir(), 'yumina-refusal-')), PORT: '0', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((done) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (code) => {
      clearTimeout(kill);
      done({ code, stderr, ms: Date.now() - t0 });
    });
  });
}

describe('container mode refuses to start half-configured', () => {
  const complete: Record<string, string> = { ...containerSettings(), DATABASE_URL: 'postgres://postgres@127.0.0.1:1/never' };

  it.each(CONTAINER_REQUIRED)('without %s: exits non-zero within 5 s with one line naming it', async (name) => {
    const { [name]: _missing, ...rest } = complete;
    const run = await start(rest);
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull(); // it exited by itself, not by the 20 s kill
    expect(run.ms).toBeLessThan(5_000);
    const lines = run.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^Invalid configuration: ${name} is required in container mode`));
  });

  it('an http public origin (not loopback) is refused the same way', async () => {
    const run = await start({ ...complete, PUBLIC_ORIGIN: 'http://play.example.com' });
    expect(run.code).toBe(1);
    expect(run.ms).toBeLessThan(5_000);
    expect(run.stderr.trim()).toMatch(/^Invalid configuration: PUBLIC_ORIGIN must be an https origin in container mode/);
  });
});
