import { grantCredits } from '@yumina/billing';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { createSession, endSession, findAccount, linkedIdentities, newId, SESSION_COOKIE } from '@yumina/accounts';
import { authenticate, requireAuth, sessionCookieOptions } from './auth.ts';
import { limitLogin, limitSignup } from './request-limits.ts';
import { DUMMY_HASH, hashPassword, verifyPassword } from './password.ts';

const email = z.string().trim().normalize('NFKC').toLowerCase().pipe(z.email('must be an e-mail address')).pipe(z.string().max(254));
const password = z.string().min(8, 'must be at least 8 characters').max(200, 'must be at most 200 characters');

const signUpBody = z.strictObject({
  email,
  password,
  displayName: z.string().trim().min(1, 'must not be empty').max(60).optional(),
  username: z
    .string()
    .trim()
    .regex(/^[a-z0-9_]{3,30}$/, 'must be 3–30 lowercase letters, digits or underscores')
    .optional(),
});
const loginBody = z.strictObject({ email, password: z.string().min(1).max(200) });

async function startLogin(ctx: AppContext, reply: FastifyReply, accountId: string) {
  const { session, token } = await createSession(ctx.db.primary, accountId, ctx.config.auth.sessionTtlDays);
  reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(ctx, session.expiresAt));
  return session;
}

export async function accountRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.post('/api/auth/signup', async (request, reply) => {
    const body = parseWith(signUpBody, request.body);
    await limitSignup(ctx, request);
    const passwordHash = await hashPassword(body.password);
    const id = newId('acc');
    try {
      await ctx.db.primary.transaction(async (tx) => {
        const inserted = await tx.query(
          `insert into accounts (id, email, username, display_name)
           select $1, $2, $3, $4 where not exists (select 1 from retired_account_ids where id = $1)`,
          [id, body.email, body.username ?? null, body.displayName ?? body.email.split('@')[0]],
        );
        if (inserted.rowCount !== 1) throw new HttpError(409, 'RETRY', 'Please try again.');
        await tx.query('insert into password_credentials (account_id, email, password_hash) values ($1, $2, $3)', [
          id,
          body.email,
          passwordHash,
        ]);
      });
    } catch (err) {
      const constraint = (err as { code?: string; constraint?: string }).code === '23505' ? (err as { constraint?: string }).constraint : undefined;
      if (constraint === 'password_credentials_email_key') throw new HttpError(409, 'EMAIL_TAKEN', 'An account with this e-mail already exists.');
      if (constraint === 'accounts_username_key') throw new HttpError(409, 'USERNAME_TAKEN', 'This username is taken.');
      throw err;
    }
    // With the platform's provider on, a newcomer can play at once on welcome credits.
    if (ctx.config.ai.official && ctx.config.welcomeCredits > 0) await grantCredits(ctx.db.primary, id, ctx.config.welcomeCredits, null, 'Welcome credits');
    const session = await startLogin(ctx, reply, id);
    reply.code(201);
    return { account: await findAccount(ctx.db.primary, id), session: { id: session.id, expiresAt: session.expiresAt.toISOString() } };
  });

  app.post('/api/auth/login', async (request, reply) => {
    const body = parseWith(loginBody, request.body);
    await limitLogin(ctx, request, body.email);
    const { rows } = await ctx.db.primary.query<{ account_id: string; password_hash: string }>(
      'select account_id, password_hash from password_credentials where lower(email) = $1',
      [body.email],
    );
    const row = rows[0];
    const ok = await verifyPassword(body.password, row?.password_hash ?? DUMMY_HASH);
    if (!row || !ok) throw new HttpError(401, 'INVALID_CREDENTIALS', 'The e-mail or password is wrong.');
    const session = await startLogin(ctx, reply, row.account_id);
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

  app.delete('/api/account', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ctx.db.primary.query('delete from accounts where id = $1', [auth.account.id]);
    reply.clearCookie(SESSION_COOKIE, { path: '/' });
    return { ok: true };
  });
}
