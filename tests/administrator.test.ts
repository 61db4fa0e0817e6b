import { Writable } from 'node:stream';
import { loadConfig } from '@yumina/config';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../containers/api/src/server.ts';
import { containerSettings } from './support/container-settings.ts';
import { Browser, startTestServer, type TestServer } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * Issue 44, point 2: who reviews on a fresh install. Container mode warns at start while no
 * administrator exists (and stops warning once one does); the first-account rule is on by default
 * only on the embedded database in local mode, and makes exactly one administrator even when the
 * first sign-ups finish at the same moment.
 */

function logSink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  return {
    lines,
    stream: new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    }),
  };
}

const warnings = (lines: string[]) =>
  lines.map((l) => JSON.parse(l) as { level: number; msg: string; type?: string }).filter((l) => l.level === 40 && /No administrator exists/.test(l.msg));

describe('administrators on a fresh install', () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it('the first-account rule: on for local mode on the embedded database, off with DATABASE_URL or in container mode, settable', () => {
    expect(loadConfig({}).auth.firstAccountAdmin).toBe(true);
    expect(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db' }).auth.firstAccountAdmin).toBe(false);
    expect(loadConfig({ ...containerSettings(), DATABASE_URL: 'postgres://x@127.0.0.1/db' }).auth.firstAccountAdmin).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgres://x@127.0.0.1/db', FIRST_ACCOUNT_ADMIN: '1' }).auth.firstAccountAdmin).toBe(true);
    expect(loadConfig({ FIRST_ACCOUNT_ADMIN: '0' }).auth.firstAccountAdmin).toBe(false);
  });

  it('container mode logs a warning at start while no administrator exists, naming the command; none once one exists', async () => {
    const first = logSink();
    const settings = containerSettings();
    const server = await startTestServer({ ...settings, LOG_LEVEL: 'info' }, { logDestination: first.stream });
    servers.push(server);
    const warned = warnings(first.lines);
    expect(warned).toHaveLength(1);
    expect(warned[0]!.msg).toContain('npm run admin -- grant <e-mail>');
    expect(warned[0]!.type).toBe('startup');

    // An account made an administrator (as scripts/admin.ts does): the next start is quiet.
    const b = new Browser(server.url);
    const made = await signUp({ url: server.url, outbox: settings.MAIL_OUTBOX_DIR! }, b);
    // Container mode: the first account is not made the administrator by itself.
    expect(made.account.isAdmin).toBe(false);
    await server.ctx.db.primary.query('update accounts set is_admin = true where id = $1', [made.account.id]);
    const second = logSink();
    const again = await startServer(server.ctx.config, { logDestination: second.stream });
    try {
      expect(second.lines.some((l) => /Listening on/.test(l))).toBe(true);
      expect(warnings(second.lines)).toEqual([]);
    } finally {
      await again.close();
    }
  });

  it('with the rule on, the first account (the samples’ own aside) is the administrator and told so; later ones are not; two at once make one', async () => {
    const server = await startTestServer({ FIRST_ACCOUNT_ADMIN: '1', SAMPLE_WORLDS: '1' });
    servers.push(server);
    const a = new Browser(server.url);
    const first = await signUp(server, a);
    expect(first.account.isAdmin).toBe(true);
    const answer = await signUp(server, new Browser(server.url));
    expect(answer.account.isAdmin).toBe(false);

    // A fresh install where the first two sign-ups finish together: exactly one administrator.
    const fresh = await startTestServer({ FIRST_ACCOUNT_ADMIN: '1' });
    servers.push(fresh);
    const both = await Promise.all([signUp(fresh, new Browser(fresh.url)), signUp(fresh, new Browser(fresh.url))]);
    expect(both.filter((s) => s.account.isAdmin)).toHaveLength(1);
    const { rows } = await fresh.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from accounts where is_admin');
    expect(rows[0]!.n).toBe(1);
  });
});
