import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbPool } from '@yumina/db';
import { containerSettings } from '../../../tests/support/container-settings.ts';
import { freePort } from '../../../tests/support/ports.ts';
import { createMigratedDatabase, type MigratedDatabase } from '../../../tests/support/postgres.ts';
import { balance, grantCredits, InsufficientCreditsError, reserveCredits, settleAbandonedReservations, settleCredits, type UsageLedgerRow } from './credits.ts';
import { creditsForUsage, DEFAULT_PRICE, maxCreditsFor, priceOf } from './prices.ts';

const root = resolve(import.meta.dirname, '../../..');

describe('credits: reserve then settle (real PostgreSQL)', () => {
  let database: MigratedDatabase;
  let db: DbPool;
  const account = async () => {
    const id = `acc_${randomBytes(16).toString('base64url')}`;
    await db.query(`insert into accounts (id, email, display_name) values ($1, $2, 'Payer')`, [id, `${id}@example.com`]);
    return id;
  };
  const charges = async (reservationId: string) =>
    (await db.query<{ n: number }>(`select count(*)::int as n from credit_ledger where reservation_id = $1 and kind = 'charge'`, [reservationId])).rows[0]!.n;

  beforeAll(async () => {
    database = await createMigratedDatabase();
    db = database.db;
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('holds the most a call can cost, charges the actual usage once, returns the rest', async () => {
    const id = await account();
    await grantCredits(db, id, 10, id, 'test grant');
    const r = await reserveCredits(db, { accountId: id, model: 'm', purpose: 'chat', estimatedTokensIn: 3000, maxTokensOut: 1000 });
    expect(r.amount).toBe(4);
    expect((await balance(db, id)).credits).toBe(6);
    expect(await settleCredits(db, r.id, { tokensIn: 1200, tokensOut: 300 })).toEqual({ charged: 2 });
    expect((await balance(db, id)).credits).toBe(8);
    expect(await settleCredits(db, r.id, { tokensIn: 1200, tokensOut: 300 })).toBeNull(); // a retried settle is a no-op
    expect((await balance(db, id)).credits).toBe(8);
    expect(await charges(r.id)).toBe(1);
    const failed = await reserveCredits(db, { accountId: id, model: 'm', purpose: 'chat', estimatedTokensIn: 10, maxTokensOut: 10 });
    await settleCredits(db, failed.id, null); // the call failed: nothing owed
    expect((await balance(db, id)).credits).toBe(8);
    expect(await charges(failed.id)).toBe(0);
  });

  it('prices cache reads and writes apart at the model’s price; the usage row holds the cache figures and the credits the ledger charged', async () => {
    const id = await account();
    await grantCredits(db, id, 100, id, 'test grant');
    const price = { input: 3000, cacheRead: 300, cacheWrite: 3750, output: 15000 };
    // the most the call can cost: every prompt token at its dearest price (a cache write), the whole output cap
    const r = await reserveCredits(db, { accountId: id, model: 'claude', purpose: 'chat', estimatedTokensIn: 2000, maxTokensOut: 1000, price });
    expect(r.amount).toBe(maxCreditsFor(price, 2000, 1000));
    expect(r.amount).toBe(Math.ceil((2000 * 3750 + 1000 * 15000) / 1e6));
    const usage = { tokensIn: 2000, tokensOut: 100, cachedTokensIn: 1500, cacheWriteTokensIn: 300 };
    const record: UsageLedgerRow = { accountId: id, model: 'claude', requestedModel: 'claude', providerModel: null, ...usage, estimated: false, partial: false, billingSource: 'official', purpose: 'chat', reservationId: null };
    // 200 fresh × 3000 + 1500 read × 300 + 300 written × 3750 + 100 out × 15000 = 3.675 M millionths → 4 credits
    expect(creditsForUsage(price, usage)).toBe(4);
    expect(await settleCredits(db, r.id, usage, 'claude', record, price)).toEqual({ charged: 4 });
    const row = await db.query('select tokens_in, cached_tokens_in, cache_write_tokens_in, tokens_out, credits::int as credits from usage_ledger where reservation_id = $1', [r.id]);
    expect(row.rows).toEqual([{ tokens_in: 2000, cached_tokens_in: 1500, cache_write_tokens_in: 300, tokens_out: 100, credits: 4 }]);
    const sums = await db.query<{ usage: number; charged: number }>(
      `select (select sum(credits)::int from usage_ledger where account_id = $1) as usage, (select -sum(amount)::int from credit_ledger where account_id = $1 and kind = 'charge') as charged`,
      [id],
    );
    expect(sums.rows[0]).toEqual({ usage: 4, charged: 4 });
    expect((await balance(db, id)).credits).toBe(96);
    // without a table entry: one credit per 1000 tokens, a cache read a tenth; figures beyond the prompt are clamped to it
    expect(priceOf({}, 'x')).toEqual({ price: DEFAULT_PRICE, listed: false });
    expect(priceOf({ '*': price }, 'x')).toEqual({ price, listed: true });
    expect(creditsForUsage(DEFAULT_PRICE, { tokensIn: 10_000, tokensOut: 0, cachedTokensIn: 10_000 })).toBe(1);
    expect(creditsForUsage(DEFAULT_PRICE, { tokensIn: 10_000, tokensOut: 0 })).toBe(10);
    expect(creditsForUsage(DEFAULT_PRICE, { tokensIn: 1000, tokensOut: 0, cachedTokensIn: 5000, cacheWriteTokensIn: 5000 })).toBe(1);
  });

  it('an empty balance is refused (402) and nothing is held', async () => {
    const id = await account();
    const err = await reserveCredits(db, { accountId: id, model: 'm', purpose: 'chat', estimatedTokensIn: 10, maxTokensOut: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientCreditsError);
    expect(err).toMatchObject({ statusCode: 402, code: 'INSUFFICIENT_CREDITS' });
    expect((await db.query('select 1 from credit_reservations where account_id = $1', [id])).rowCount).toBe(0);
  });

  /** Runs the crash fixture up to `step`, then SIGKILLs it there. */
  async function crashAt(accountId: string, step: 'after-reserve' | 'mid-settle' | 'after-settle'): Promise<string> {
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'tests/fixtures/billing-crash.ts'), database.url, accountId, step], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((ok, fail) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) ok(out.trim());
      });
      child.on('exit', (code) => fail(new Error(`child exited ${code} before ${step}`)));
    });
    const reported = JSON.parse(line) as { step: string; reservationId: string };
    expect(reported.step).toBe(step);
    child.kill('SIGKILL');
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
    return reported.reservationId;
  }

  /**
   * A restart: the real container server starts on the same database and its scheduled maintenance
   * settles what the dead process left open. Reservations are settled once they are 15 minutes old,
   * so the test ages them instead of waiting.
   */
  async function restartServerUntilSettled(reservationIds: string[]): Promise<void> {
    await db.query(`update credit_reservations set created_at = now() - interval '16 minutes' where id = any($1)`, [reservationIds]);
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'yumina-billing-restart-'));
    const server = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'containers/api/src/main.ts')], {
      cwd: root,
      env: { ...process.env, ...containerSettings(), LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', MAINTENANCE_PERIOD_MS: '500' },
      stdio: 'ignore',
    });
    try {
      await expect
        .poll(
          async () => (await db.query(`select 1 from credit_reservations where id = any($1) and status = 'reserved'`, [reservationIds])).rowCount,
          { timeout: 40_000, interval: 250 },
        )
        .toBe(0);
      // Let a few more maintenance periods pass: a second run must change nothing.
      await new Promise((r) => setTimeout(r, 1_500));
    } finally {
      server.kill('SIGTERM');
      if (server.exitCode === null && server.signalCode === null) await new Promise((r) => server.once('exit', r));
      rmSync(dataDir, { recursive: true, force: true });
    }
  }

  it('charges exactly once when the process is killed after reserving, inside the settle transaction, or after settling, across a server restart', async () => {
    const accounts = { afterReserve: await account(), midSettle: await account(), afterSettle: await account() };
    for (const id of Object.values(accounts)) await grantCredits(db, id, 5, id, 'test grant');

    const heldBeforeSettle = await crashAt(accounts.afterReserve, 'after-reserve');
    const killedInSettle = await crashAt(accounts.midSettle, 'mid-settle');
    const settledBeforeKill = await crashAt(accounts.afterSettle, 'after-settle');

    const reservation = async (id: string) =>
      (await db.query<{ amount: string; status: string; charged: string | null }>('select amount, status, charged from credit_reservations where id = $1', [id])).rows[0]!;
    const held = Number((await reservation(heldBeforeSettle)).amount);
    expect(held).toBeGreaterThan(0);
    // Killed before COMMIT: the open settle transaction died with its connection; nothing of it stayed.
    await expect.poll(async () => (await reservation(killedInSettle)).status, { timeout: 10_000 }).toBe('reserved');
    expect(await charges(killedInSettle)).toBe(0);
    expect((await balance(db, accounts.midSettle)).credits).toBe(5 - held);
    // Killed after COMMIT: settled at the actual usage (500 tokens = 1 credit), the rest returned.
    expect(await reservation(settledBeforeKill)).toMatchObject({ status: 'settled' });
    expect((await balance(db, accounts.afterSettle)).credits).toBe(4);

    await restartServerUntilSettled([heldBeforeSettle, killedInSettle, settledBeforeKill]);

    for (const [id, reservationId] of [
      [accounts.afterReserve, heldBeforeSettle],
      [accounts.midSettle, killedInSettle],
    ] as const) {
      // Usage unknown: settled by maintenance at the amount held, charged exactly once.
      expect(await reservation(reservationId)).toMatchObject({ status: 'settled' });
      expect(await charges(reservationId)).toBe(1);
      expect((await balance(db, id)).credits).toBe(5 - held);
      const ledger = await db.query<{ amount: string }>('select amount from credit_ledger where account_id = $1 order by id', [id]);
      expect(ledger.rows.map((r) => Number(r.amount))).toEqual([5, -held]);
      // The dead process's settle arriving late changes nothing.
      expect(await settleCredits(db, reservationId, { tokensIn: 10, tokensOut: 10 })).toBeNull();
    }
    // Already settled before the crash: the restart charged nothing more.
    expect(await charges(settledBeforeKill)).toBe(1);
    expect((await balance(db, accounts.afterSettle)).credits).toBe(4);
    expect(await settleAbandonedReservations(db, 0)).toBe(0);
  }, 90_000);
});
