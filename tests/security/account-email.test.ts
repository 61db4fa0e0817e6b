import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DbPool, runMigrations } from '@yumina/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackOidc, startLoopbackOidc } from '../support/oidc.ts';
import { createTestDatabase } from '../support/postgres.ts';
import { freePort } from '../support/redis.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp as signUpAccount } from '../support/sign-up.ts';

/**
 * Item 2 of issue 28: administrator and credit grants by e-mail reached the wrong account. An OAuth
 * sign-in stored the provider's unverified e-mail in any letter case, `npm run admin -- grant
 * <email>` then made every account with that address an administrator, and credit grants and
 * review holds by e-mail picked the oldest match. A real server on PostgreSQL and Redis, a real
 * OIDC provider on loopback (oauth2-mock-server), and the documented admin command as a process.
 */

const root = resolve(import.meta.dirname, '../..');
const migrations = join(root, 'migrations');
/** The migration that makes an address identify at most one account. */
const MIGRATION = '088_one_account_per_email.sql';

interface SessionAccount {
  id: string;
  email: string;
  emailVerified: boolean;
  displayName: string;
}
interface ErrorBody {
  error: { code: string; message: string };
}

describe('accounts by e-mail: grants reach exactly the holder of the address', () => {
  let server: TestServer;
  let oidc: LoopbackOidc;
  let operator: Browser;

  beforeAll(async () => {
    oidc = await startLoopbackOidc();
    const port = await freePort();
    server = await startTestServer({ PORT: String(port), PUBLIC_ORIGIN: `http://127.0.0.1:${port}`, ...oidc.env() });
    operator = (await signUp('operator@example.com', 'Operator')).browser;
    await server.ctx.db.primary.query(`update accounts set is_admin = true where lower(email) = 'operator@example.com'`);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    await oidc?.stop();
  });

  const session = async (b: Browser) => ((await (await b.fetch('/api/auth/session')).json()) as { account: SessionAccount }).account;

  async function signUp(email: string, displayName: string): Promise<{ browser: Browser; account: SessionAccount }> {
    const browser = new Browser(server.url);
    const res = await signUpAccount(server, browser, { email, password: 'long enough pw', displayName });
    expect(res.status).toBe(201);
    return { browser, account: await session(browser) };
  }

  /** A whole "Sign in with Google" in a browser of its own: start, the provider, the callback. */
  async function signInWithGoogle(identity: LoopbackOidc['identity']): Promise<{ browser: Browser; account: SessionAccount }> {
    oidc.identity = identity;
    const browser = new Browser(server.url);
    const start = await browser.fetch('/api/auth/oauth/google/start?returnTo=/app/settings');
    expect(start.status).toBe(302);
    const authorize = await fetch(start.headers.get('location')!, { redirect: 'manual' });
    expect(authorize.status).toBe(302);
    const callback = new URL(authorize.headers.get('location')!);
    const done = await browser.fetch(`${callback.pathname}${callback.search}`);
    expect(done.status).toBe(302);
    expect(done.headers.get('location')).toBe('/app/settings');
    return { browser, account: await session(browser) };
  }

  /** `npm run admin -- <args>`, as an operator runs it (same configuration as the server). */
  function adminCommand(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((done) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'scripts/admin.ts', ...args],
        { cwd: root, env: { ...process.env, DATABASE_URL: server.database.url, DATA_DIR: server.dataDir, LOG_LEVEL: 'fatal' } },
        (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  const accountRow = async (id: string) =>
    (
      await server.ctx.db.primary.query<{ email: string; email_verified: boolean; is_admin: boolean; credits: number; held: boolean }>(
        `select a.email, a.email_verified, a.is_admin,
                coalesce((select sum(amount)::int from credit_ledger l where l.account_id = a.id), 0) as credits,
                exists (select 1 from account_review_flags f where f.account_id = a.id and f.hold_publications) as held
           from accounts a where a.id = $1`,
        [id],
      )
    ).rows[0]!;

  it('an OAuth sign-in with an unverified e-mail in another letter case takes no address; `admin grant <e-mail>` makes only its holder an administrator and says which account', async () => {
    const victim = await signUp('victim@example.com', 'Victim');
    const attacker = await signInWithGoogle({ sub: 'attacker-1', email: 'VICTIM@Example.com', emailVerified: false, name: 'Mallory' });
    expect(attacker.account.id).not.toBe(victim.account.id);

    const grant = await adminCommand('grant', 'victim@example.com');
    expect(grant.code).toBe(0);
    expect((await accountRow(victim.account.id)).is_admin).toBe(true);
    expect((await accountRow(attacker.account.id)).is_admin).toBe(false);
    // The operator sees which account changed: its id, e-mail and display name, and nothing else.
    expect(grant.stdout).toContain(victim.account.id);
    expect(grant.stdout).toContain('victim@example.com');
    expect(grant.stdout).toContain('Victim');
    expect(grant.stdout).not.toContain(attacker.account.id);
    expect(grant.stdout).toMatch(/is now an administrator/);

    // The unverified provider address was never the attacker's: a placeholder that is no address.
    const held = await accountRow(attacker.account.id);
    expect(held.email.toLowerCase()).not.toBe('victim@example.com');
    expect(held.email).toMatch(/@users\.invalid$/);
    expect(held.email_verified).toBe(false);

    // By account id, too.
    const revoke = await adminCommand('revoke', victim.account.id);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toContain(victim.account.id);
    expect(revoke.stdout).toMatch(/is no longer an administrator/);
    expect((await accountRow(victim.account.id)).is_admin).toBe(false);
    // An address nobody holds: refused, exit 1, nothing changed.
    const none = await adminCommand('grant', 'nobody@example.com');
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/nobody@example\.com/);
  }, 180_000); // the admin command runs as a process (tsx compiles it): seconds on a quiet machine, 13 s each at load 19

  it('credit grants and review holds by e-mail reach the holder of the address, not an older account that named it unverified', async () => {
    const early = await signInWithGoogle({ sub: 'attacker-2', email: 'target@example.com', emailVerified: false, name: 'Early Bird' });
    const target = await signUp('target@example.com', 'Target');

    const res = await operator.fetch('/api/admin/credits', { method: 'POST', json: { account: 'Target@Example.com', amount: 7, reason: 'support' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { credits: number; account: Record<string, unknown> };
    expect(body.account).toEqual({ id: target.account.id, email: 'target@example.com', emailVerified: true, displayName: 'Target' });
    expect((await accountRow(target.account.id)).credits).toBe(7);
    expect((await accountRow(early.account.id)).credits).toBe(0);

    const hold = await operator.fetch('/api/admin/review-flag', { method: 'PUT', json: { account: 'TARGET@example.com', hold: true, reason: 'check' } });
    expect(hold.status).toBe(200);
    expect(await hold.json()).toMatchObject({ accountId: target.account.id, email: 'target@example.com', displayName: 'Target', hold: true });
    expect((await accountRow(target.account.id)).held).toBe(true);
    expect((await accountRow(early.account.id)).held).toBe(false);
  });

  it('a verified provider e-mail is the account’s address when it is free and never when another account holds it; the database holds one account per address', async () => {
    const fresh = await signInWithGoogle({ sub: 'fresh-1', email: 'Fresh@Example.com', name: 'Fresh' });
    expect(fresh.account).toMatchObject({ email: 'fresh@example.com', emailVerified: true });
    // A later sign-up with it answers like one with a free address (issue 35, point 5), signs nobody in, creates nothing.
    const asker = new Browser(server.url);
    const taken = await asker.fetch('/api/auth/signup', { method: 'POST', json: { email: 'FRESH@example.com', password: 'long enough pw' } });
    expect(taken.status).toBe(202);
    expect(((await taken.json()) as { status: string }).status).toBe('verification_sent');
    expect(asker.cookies.size).toBe(0);
    expect((await server.ctx.db.primary.query(`select id from accounts where lower(email) = 'fresh@example.com'`)).rows).toEqual([{ id: fresh.account.id }]);
    expect((await server.ctx.db.primary.query(`select 1 from pending_signups where lower(email) = 'fresh@example.com'`)).rowCount).toBe(0);

    const holder = await signUp('held@example.com', 'Holder');
    const second = await signInWithGoogle({ sub: 'held-2', email: 'HELD@example.com', name: 'Second' });
    expect(second.account.id).not.toBe(holder.account.id);
    expect(second.account.email).toMatch(/@users\.invalid$/);
    expect(second.account.emailVerified).toBe(false);
    const res = await operator.fetch('/api/admin/credits', { method: 'POST', json: { account: 'held@example.com', amount: 1, reason: 'r' } });
    expect(((await res.json()) as { account: { id: string } }).account.id).toBe(holder.account.id);

    // The database itself refuses a second holder, in any letter case.
    await expect(
      server.ctx.db.primary.query(`insert into accounts (id, email, display_name) values ('acc_second_holder_0001', 'HELD@EXAMPLE.COM', 'Second holder')`),
    ).rejects.toMatchObject({ code: '23505' });
    // A sign-up cannot take an address of the reserved .invalid domain the placeholders use.
    const reserved = await new Browser(server.url).fetch('/api/auth/signup', { method: 'POST', json: { email: `${second.account.id}@users.invalid`, password: 'long enough pw' } });
    expect(reserved.status).toBe(400);
  });

  it('a display name that looks like an e-mail is not an e-mail; a name two accounts share is refused naming both ids, and the account id works', async () => {
    const spoof = await signInWithGoogle({ sub: 'spoof-1', email: 'spoofer@example.net', emailVerified: false, name: 'ghost@example.com' });
    const ghost = await operator.fetch('/api/admin/credits', { method: 'POST', json: { account: 'ghost@example.com', amount: 5, reason: 'r' } });
    expect(ghost.status).toBe(404);
    expect(((await ghost.json()) as ErrorBody).error.code).toBe('NOT_FOUND');
    expect((await accountRow(spoof.account.id)).credits).toBe(0);

    const one = await signUp('twin1@example.com', 'Twin');
    const two = await signUp('twin2@example.com', 'Twin');
    const ambiguous = await operator.fetch('/api/admin/credits', { method: 'POST', json: { account: 'twin', amount: 5, reason: 'r' } });
    expect(ambiguous.status).toBe(409);
    const refusal = (await ambiguous.json()) as ErrorBody;
    expect(refusal.error.code).toBe('AMBIGUOUS_ACCOUNT');
    expect(refusal.error.message).toContain(one.account.id);
    expect(refusal.error.message).toContain(two.account.id);
    const byId = await operator.fetch('/api/admin/credits', { method: 'POST', json: { accountId: two.account.id, amount: 5, reason: 'r' } });
    expect(((await byId.json()) as { account: { id: string } }).account.id).toBe(two.account.id);
    expect((await accountRow(one.account.id)).credits).toBe(0);
    expect((await accountRow(two.account.id)).credits).toBe(5);
  });

  it('should two accounts ever hold one address (its unique index dropped by hand), every by-e-mail action refuses naming both, and the account id still works', async () => {
    const db = server.ctx.db.primary;
    await db.query('drop index if exists accounts_email_key');
    const ids = ['acc_shared_address_0001', 'acc_shared_address_0002'];
    await db.query(`insert into accounts (id, email, display_name) values ($1, 'shared@example.com', 'First'), ($2, 'SHARED@example.com', 'Second')`, ids);
    try {
      const grant = await adminCommand('grant', 'shared@example.com');
      expect(grant.code).toBe(1);
      for (const id of ids) {
        expect(grant.stderr).toContain(id);
        expect((await accountRow(id)).is_admin).toBe(false);
      }
      for (const [method, path, json] of [
        ['POST', '/api/admin/credits', { account: 'shared@example.com', amount: 3, reason: 'r' }],
        ['PUT', '/api/admin/review-flag', { account: 'Shared@Example.com', hold: true, reason: 'r' }],
      ] as const) {
        const res = await operator.fetch(path, { method, json });
        expect({ path, status: res.status }).toEqual({ path, status: 409 });
        const body = (await res.json()) as ErrorBody;
        expect(body.error.code).toBe('AMBIGUOUS_ACCOUNT');
        for (const id of ids) expect(body.error.message).toContain(id);
      }
      for (const id of ids) expect(await accountRow(id)).toMatchObject({ credits: 0, held: false });
      const byId = await adminCommand('grant', ids[1]!);
      expect(byId.code).toBe(0);
      expect(byId.stdout).toContain(ids[1]);
      expect((await accountRow(ids[1]!)).is_admin).toBe(true);
      expect((await accountRow(ids[0]!)).is_admin).toBe(false);
    } finally {
      await db.query('delete from accounts where id = any($1)', [ids]);
      await db.query('create unique index if not exists accounts_email_key on accounts (lower(email))');
    }
  });
});

describe('the migration that makes an address identify one account, on data that breaks the rule', () => {
  it('keeps each address on its verified, else oldest, holder, clears it on the others and on unverified provider addresses, and loses no account', async () => {
    const database = await createTestDatabase();
    const db = new DbPool({ name: 'primary', connectionString: database.url, max: 2, queryTimeoutMs: 10_000, connectTimeoutMs: 5_000 });
    const earlier = mkdtempSync(join(tmpdir(), 'yumina-migrations-'));
    try {
      for (const file of readdirSync(migrations).filter((f) => f.endsWith('.sql') && f < MIGRATION)) copyFileSync(join(migrations, file), join(earlier, file));
      await runMigrations(db, earlier);
      // [id, e-mail, verified, created (day of January 2024), provider identity, password e-mail, admin]
      const rows: [string, string, boolean, number, string | null, string | null, boolean][] = [
        ['acc_migration_c_0000001', 'Dup@Example.com', false, 1, 'discord', null, false], // oldest, but an unverified provider address
        ['acc_migration_a_0000001', 'dup@example.com', false, 2, null, 'dup@example.com', true], // password sign-up, unverified
        ['acc_migration_b_0000001', 'DUP@example.com', true, 3, 'google', null, false], // verified: keeps it
        ['acc_migration_d_0000001', 'old@example.com', false, 4, null, null, false], // oldest: keeps it
        ['acc_migration_e_0000001', 'OLD@example.com', false, 5, null, null, false],
        ['acc_migration_f_0000001', 'tie@example.com', false, 6, null, null, false], // same time: the lower id keeps it
        ['acc_migration_g_0000001', 'Tie@example.com', false, 6, null, null, false],
        ['acc_migration_h_0000001', 'solo@example.com', false, 7, 'twitter', null, false], // unverified provider address, alone
        ['acc_migration_k_0000001', 'two@example.com', true, 8, 'google', null, false], // two verified: the older keeps it
        ['acc_migration_l_0000001', 'TWO@example.com', true, 9, 'discord', null, false],
        ['acc_migration_p_0000001', 'pw@example.com', false, 10, null, 'pw@example.com', false], // a plain sign-up: untouched
        ['acc_migration_q_0000001', 'acc_migration_e_0000001@users.invalid', false, 11, null, null, false], // holds e's would-be placeholder
      ];
      for (const [id, email, verified, day, provider, password, admin] of rows) {
        await db.query(`insert into accounts (id, email, email_verified, display_name, is_admin, created_at) values ($1, $2, $3, $1, $4, $5)`, [
          id,
          email,
          verified,
          admin,
          new Date(Date.UTC(2024, 0, day)),
        ]);
        if (provider) await db.query('insert into oauth_identities (provider, subject, account_id) values ($1, $2, $3)', [provider, `${id}-sub`, id]);
        if (password) await db.query(`insert into password_credentials (account_id, email, password_hash) values ($1, $2, 'x')`, [id, password]);
      }

      const { applied } = await runMigrations(db, migrations);
      expect(applied).toContain(MIGRATION);

      const after = new Map(
        (await db.query<{ id: string; email: string; email_verified: boolean; is_admin: boolean }>('select id, email, email_verified, is_admin from accounts')).rows.map((r) => [r.id, r]),
      );
      expect(after.size).toBe(rows.length);
      const cleared = (id: string) => ({ email: `${id}@users.invalid`, email_verified: false });
      expect(after.get('acc_migration_b_0000001')).toMatchObject({ email: 'DUP@example.com', email_verified: true });
      expect(after.get('acc_migration_c_0000001')).toMatchObject(cleared('acc_migration_c_0000001'));
      expect(after.get('acc_migration_a_0000001')).toMatchObject({ ...cleared('acc_migration_a_0000001'), is_admin: true });
      expect(after.get('acc_migration_d_0000001')).toMatchObject({ email: 'old@example.com' });
      expect(after.get('acc_migration_e_0000001')!.email).toMatch(/^acc_migration_e_0000001\.\d+@users\.invalid$/);
      expect(after.get('acc_migration_q_0000001')).toMatchObject({ email: 'acc_migration_e_0000001@users.invalid' });
      expect(after.get('acc_migration_f_0000001')).toMatchObject({ email: 'tie@example.com' });
      expect(after.get('acc_migration_g_0000001')).toMatchObject(cleared('acc_migration_g_0000001'));
      expect(after.get('acc_migration_h_0000001')).toMatchObject(cleared('acc_migration_h_0000001'));
      expect(after.get('acc_migration_k_0000001')).toMatchObject({ email: 'two@example.com', email_verified: true });
      expect(after.get('acc_migration_l_0000001')).toMatchObject(cleared('acc_migration_l_0000001'));
      expect(after.get('acc_migration_p_0000001')).toMatchObject({ email: 'pw@example.com' });
      // The password sign-in of an account whose address moved keeps working with its own address.
      const credentials = await db.query<{ email: string }>(`select email from password_credentials where account_id = 'acc_migration_a_0000001'`);
      expect(credentials.rows[0]?.email).toBe('dup@example.com');
      // And from now on the database refuses a second holder.
      await expect(db.query(`insert into accounts (id, email, display_name) values ('acc_migration_z_0000001', 'PW@example.com', 'z')`)).rejects.toMatchObject({ code: '23505' });
    } finally {
      rmSync(earlier, { recursive: true, force: true });
      await db.end();
      await database.drop();
    }
  });
});
