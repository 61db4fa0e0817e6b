import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbPool, runMigrations } from '@yumina/db';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../../../tests/support/postgres.ts';
import { balance, grantCredits, InsufficientCreditsError, reserveCredits, settleAbandonedReservations, settleCredits } from './credits.ts';

const root = resolve(import.meta.dirname, '../../..');

describe.runIf(hasPostgres)('credits: reserve then settle (real PostgreSQL)', () => {
  let database: TestDatabase;
  let db: DbPool;
  const account = async () => {
    const id = `acc_${randomBytes(16).toString('base64url')}`;
    await db.query(`insert into accounts (id, email, display_name) values ($1, $2, 'Payer')`, [id, `${id}@example.com`]);
    return id;
  };
  const charges = async (reservationId: string) =>
    (await db.query<{ n: number }>(`select count(*)::int as n from credit_ledger where reservation_id = $1 and kind = 'charge'`, [reservationId])).rows[0]!.n;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = new DbPool({ name: 'primary', connectionString: database.url, max: 4, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
    await runMigrations(db, resolve(root, 'migrations'));
  });
  afterAll(async () => {
    await db?.end();
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

  it('an empty balance is refused (402) and nothing is held', async () => {
    const id = await account();
    const err = await reserveCredits(db, { accountId: id, model: 'm', purpose: 'chat', estimatedTokensIn: 10, maxTokensOut: 10 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InsufficientCreditsError);
    expect(err).toMatchObject({ statusCode: 402, code: 'INSUFFICIENT_CREDITS' });
    expect((await db.query('select 1 from credit_reservations where account_id = $1', [id])).rowCount).toBe(0);
  });

  it('charges exactly once when the process is killed between reserve and settle, and after a restart', async () => {
    const id = await account();
    await grantCredits(db, id, 5, id, 'test grant');
    const child = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'tests/fixtures/reserve-then-hang.ts'), database.url, id], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = await new Promise<string>((ok, fail) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('\n')) ok(out.trim());
      });
      child.on('exit', (code) => fail(new Error(`child exited ${code}`)));
    });
    const reservation = JSON.parse(line) as { id: string; amount: number };
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    expect((await balance(db, id)).credits).toBe(5 - reservation.amount); // held, not yet charged

    // "Restart": the maintenance job settles what the dead process left open, at the amount held.
    expect(await settleAbandonedReservations(db, 0)).toBeGreaterThanOrEqual(1);
    // The dead process's settle arriving late (or a second maintenance run) changes nothing.
    expect(await settleCredits(db, reservation.id, { tokensIn: 10, tokensOut: 10 })).toBeNull();
    expect(await settleAbandonedReservations(db, 0)).toBe(0);
    expect(await charges(reservation.id)).toBe(1);
    expect((await balance(db, id)).credits).toBe(5 - reservation.amount);
    const ledger = await db.query<{ amount: string; balance_after: string }>('select amount, balance_after from credit_ledger where account_id = $1 order by id', [id]);
    expect(ledger.rows.map((r) => Number(r.amount))).toEqual([5, -reservation.amount]);
  }, 30_000);
});
