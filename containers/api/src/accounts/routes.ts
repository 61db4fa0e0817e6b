import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { endSession, findAccount, linkedIdentities, SESSION_COOKIE } from '@yumina/accounts';
import { authenticate, requireAuth, startLogin } from './auth.ts';
import { emailField, pendingEmail, REAUTH_MINUTES } from './email-routes.ts';
import { countPasswordHash, limitLogin, limitPasswordCheck, limitPasswordHashing } from './request-limits.ts';
import { dummyHash, verifyPassword } from './password.ts';

const loginBody = z.strictObject({ email: emailField, password: z.string().min(1).max(200) });
const deleteBody = z.strictObject({ password: z.string().max(200).optional() });

export async function accountRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post('/api/auth/login', async (request, reply) => {
    const body = parseWith(loginBody, request.body);
    await limitLogin(ctx, request, body.email);
    await limitPasswordHashing(ctx, request);
    const { rows } = await ctx.db.primary.query<{ account_id: string; password_hash: string }>(
      'select account_id, password_hash from password_credentials where lower(email) = $1',
      [body.email],
    );
    const row = rows[0];
    countPasswordHash(ctx, 'login');
    const ok = await verifyPassword(body.password, row?.password_hash ?? (await dummyHash(ctx.config.auth.passwordHashCost)));
    if (!row || !ok) throw new HttpError(401, 'INVALID_CREDENTIALS', 'The e-mail or password is wrong.');
    const session = await startLogin(ctx, reply, row.account_id, request);
    return { account: await findAccount(ctx.db.primary, row.account_id), session: { id: session.id, expiresAt: session.expiresAt.toISOString() } };
  });

  app.post('/api/auth/logout', async (request, reply) => {
    const auth = await authenticate(ctx, request);
    if (auth) await endSession(ctx.db.primary, auth.session.id);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return { ok: true };
  });

  /** The current login, or {account: null}: never a 401, so pages can tell "signed out" from "failed". */
  app.get('/api/auth/session', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const auth = await authenticate(ctx, request, reply);
    if (!auth) return { account: null, session: null };
    return {
      account: auth.account,
      identities: await linkedIdentities(ctx.db.primary, auth.account.id),
      session: { id: auth.session.id, expiresAt: auth.session.expiresAt.toISOString() },
    };
  });

  /** Settings' view of the account: what the session gives, plus how it signs in and an address change waiting for its link. */
  app.get('/api/account', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const { account } = await requireAuth(ctx, request, reply);
    const { rows } = await ctx.db.primary.query<{ has_password: boolean }>('select exists (select 1 from password_credentials where account_id = $1) as has_password', [account.id]);
    return { account, hasPassword: rows[0]!.has_password, pendingEmail: await pendingEmail(ctx.db.primary, account.id) };
  });

  /**
   * Deletes the account and everything it owns. The login alone is not enough (a stolen cookie must
   * not erase an account): an account with a password gives it (`{"password"}`); one without asks
   * from a login made in the last REAUTH_MINUTES (a fresh sign-in with its provider).
   */
  app.delete('/api/account', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(deleteBody, request.body ?? {});
    const { rows } = await ctx.db.primary.query<{ password_hash: string }>('select password_hash from password_credentials where account_id = $1', [auth.account.id]);
    if (rows[0]) {
      if (!body.password) throw new HttpError(400, 'VALIDATION_FAILED', 'Enter your password to delete your account.');
      await limitPasswordCheck(ctx, auth.account.id);
      if (!(await verifyPassword(body.password, rows[0].password_hash))) throw new HttpError(403, 'WRONG_PASSWORD', 'The password is wrong.');
    } else {
      const fresh = await ctx.db.primary.query('select 1 from login_sessions where id = $1 and created_at > now() - make_interval(mins => $2)', [auth.session.id, REAUTH_MINUTES]);
      if (!fresh.rowCount) {
        throw new HttpError(403, 'SIGN_IN_AGAIN', `For your safety, sign out and sign in again with your provider, then delete your account within ${REAUTH_MINUTES} minutes.`);
      }
    }
    await ctx.db.primary.query('delete from accounts where id = $1', [auth.account.id]);
    // Its uploaded picture and data archives go with it.
    for (const prefix of [`pictures/${auth.account.id}/`, `exports/${auth.account.id}/`]) {
      for (const key of await ctx.objects.list(prefix).catch(() => [])) await ctx.objects.delete(key).catch(() => {});
    }
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return { ok: true };
  });
}
