import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from './support/server.ts';
import { signUp } from './support/sign-up.ts';

/**
 * Issue 51, point 8: an idle replica does no work. The mail queue and the data exports polled
 * PostgreSQL every 1–2 s on every replica although nothing waited; now the work wakes them (an
 * enqueue, an export request, a retry falling due) and an idle replica only sweeps once a minute.
 * Measured on PostgreSQL's own counters of the two tables' scans (pg_stat_user_tables).
 */
describe('an idle replica', () => {
  let server: TestServer;
  let stats: pg.Client;

  beforeAll(async () => {
    server = await startTestServer();
    stats = new pg.Client({ connectionString: server.database.url });
    await stats.connect();
  });
  afterAll(async () => {
    await stats?.end();
    await server?.stop();
  });

  /** Every scan of the mail queue and the export table so far (the statistics as of now, not cached for the transaction). */
  const scans = async () => {
    await stats.query('select pg_stat_clear_snapshot()');
    const { rows } = await stats.query<{ relname: string; scans: string }>(
      `select relname, (coalesce(seq_scan, 0) + coalesce(idx_scan, 0))::text as scans from pg_stat_user_tables where relname in ('mail_queue', 'account_exports') order by relname`,
    );
    return Object.fromEntries(rows.map((r) => [r.relname, Number(r.scans)]));
  };
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('reads neither the mail queue nor the export table while nothing waits, and still sends a mail at once when one is queued', async () => {
    await sleep(1500); // the start's own first look is over, and its statistics reported
    const before = await scans();
    await sleep(6000);
    // (statistics reach the view when a backend's transaction ends, at most a second late)
    await sleep(1200);
    expect(await scans()).toEqual(before);

    // work wakes it: a sign-up's mail is sent (to the outbox) without waiting for a sweep
    const player = new Browser(server.url);
    await signUp(server, player, { displayName: 'Woken' });
    const asked = await player.fetch('/api/account/exports', { method: 'POST' });
    expect(asked.status).toBe(202);
    await expect
      .poll(async () => ((await (await player.fetch('/api/account/exports')).json()) as { exports: { status: string }[] }).exports[0]?.status, { timeout: 10_000 })
      .toBe('ready');
  }, 60_000);
});
