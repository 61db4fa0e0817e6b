import { endOtherSessions, findAccount } from '@yumina/accounts';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { endLinks, inspectLink, issueLink, linkRefusal, useLink } from './account-links.ts';
import { accountMail } from './account-mail.ts';
import { requireAuth, startLogin } from './auth.ts';
import { emailField, pageLink } from './email-routes.ts';
import { isReservedAddress } from './email-address.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { countPasswordHash, limitMailToAddress, limitPasswordCheck, limitPasswordHashing } from './request-limits.ts';

/** The rules of a new password: those of sign-up. */
export const newPassword = z.string().min(8, 'must be at least 8 characters').max(200, 'must be at most 200 characters');

const forgotBody = z.strictObject({ email: emailField });
const resetBody = z.strictObject({ token: z.string().max(200), password: newPassword });
const checkBody = z.strictObject({ token: z.string().max(200) });
const changeBody = z.strictObject({ currentPassword: z.string().min(1, 'must not be empty').max(200), newPassword });

const ASK_AGAIN = 'Ask for a new link on the “Forgot password” page.';
/** The one answer of “forgot password”, whether or not the address has an account. */
const FORGOT_ANSWER = {
  ok: true,
  message: 'If an account uses this address, we sent it a link to choose a new password. The link works once, for 30 minutes. Check your spam folder if nothing arrives.',
};

/**
 * Password reset and change (issue 35, point 3):
 * - POST /api/auth/password/forgot answers the same, at once, whether or not the address has an
 *   account (limited per address and per client first); the lookup and the link happen after the
 *   answer has gone, so its timing says nothing either;
 * - POST /api/auth/password/reset-check tells the reset page whether its link still works;
 * - POST /api/auth/password/reset sets the new password (single use, 30 min), ends every login of
 *   the account and signs this browser in; the address the link reached is thereby verified;
 * - POST /api/account/password (signed in, current password required) ends the other logins.
 * Each change is announced to the account's address.
 */
export async function passwordRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.post('/api/auth/password/forgot', async (request, reply) => {
    const { email } = parseWith(forgotBody, request.body);
    await limitMailToAddress(ctx, request, 'password-reset', email, { key: `password-reset:address:${request.ip}`, limit: ctx.config.limits.accountMailPerHour * 4 });
    setImmediate(() => {
      sendResetLink(ctx, email).catch((err: unknown) => ctx.log.error({ type: 'account.reset-link', err: (err as Error).message }, 'could not queue a password reset link'));
    });
    reply.code(202).header('cache-control', 'no-store');
    return FORGOT_ANSWER;
  });

  app.post('/api/auth/password/reset-check', async (request, reply) => {
    const { token } = parseWith(checkBody, request.body);
    reply.header('cache-control', 'no-store');
    const found = await inspectLink(db, ['reset_password'], token);
    if (found.state !== 'valid') throw linkRefusal(found.state, ASK_AGAIN);
    return { ok: true };
  });

  app.post('/api/auth/password/reset', async (request, reply) => {
    const body = parseWith(resetBody, request.body);
    // Issue 43: limited per client address, and the link checked before the password is hashed (a
    // made-up token costs no hash); useLink checks it again, and uses it, in the transaction.
    await limitPasswordHashing(ctx, request);
    const found = await inspectLink(db, ['reset_password'], body.token);
    if (found.state !== 'valid') throw linkRefusal(found.state, ASK_AGAIN);
    countPasswordHash(ctx, 'password-reset');
    const hash = await hashPassword(body.password, ctx.config.auth.passwordHashCost);
    const { accountId, email, ended } = await db.transaction(async (tx) => {
      const link = await useLink(tx, ['reset_password'], body.token, ASK_AGAIN);
      // The account's password sign-in, at the address the link reached (an account that signed in
      // only through a provider gets one here, with its verified address).
      await tx.query(
        `insert into password_credentials (account_id, email, password_hash) values ($1, $2, $3)
         on conflict (account_id) do update set password_hash = excluded.password_hash, updated_at = now()`,
        [link.accountId, link.email, hash],
      );
      // Following the link proved the mailbox: the account's address, if it is this one, is verified.
      await tx.query('update accounts set email_verified = true where id = $1 and lower(email) = lower($2)', [link.accountId, link.email]);
      const ended = await endOtherSessions(tx, link.accountId, null);
      return { accountId: link.accountId, email: link.email, ended };
    });
    await startLogin(ctx, reply, accountId, request);
    const account = await findAccount(db, accountId);
    await ctx.mail.enqueue(db, { kind: 'password-changed', accountId, to: email, ...accountMail.passwordChanged(account?.displayName ?? 'there', pageLink(ctx, '/forgot-password')) });
    request.log.info({ type: 'account.password-reset', accountId, endedSessions: ended }, 'password reset');
    return { ok: true, endedSessions: ended, account };
  });

  app.post('/api/account/password', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(changeBody, request.body);
    const { account, session } = auth;
    const { rows } = await db.query<{ password_hash: string; email: string }>('select password_hash, email from password_credentials where account_id = $1', [account.id]);
    const credential = rows[0];
    if (!credential) {
      throw new HttpError(409, 'NO_PASSWORD', 'This account signs in through a provider and has no password yet. To add one, use “Forgot password” with your verified address.');
    }
    await limitPasswordCheck(ctx, account.id);
    if (!(await verifyPassword(body.currentPassword, credential.password_hash))) throw new HttpError(403, 'WRONG_PASSWORD', 'The current password is wrong.');
    const hash = await hashPassword(body.newPassword, ctx.config.auth.passwordHashCost);
    const ended = await db.transaction(async (tx) => {
      await tx.query('update password_credentials set password_hash = $2, updated_at = now() where account_id = $1', [account.id, hash]);
      // A reset link asked for before the change would undo it: it works no more.
      await endLinks(tx, account.id, ['reset_password']);
      return endOtherSessions(tx, account.id, session.id);
    });
    const to = isReservedAddress(account.email) ? credential.email : account.email;
    await ctx.mail.enqueue(db, { kind: 'password-changed', accountId: account.id, to, ...accountMail.passwordChanged(account.displayName, pageLink(ctx, '/forgot-password')) });
    request.log.info({ type: 'account.password-changed', accountId: account.id, endedSessions: ended }, 'password changed');
    return { ok: true, endedSessions: ended };
  });
}

/**
 * After the answer: the account that signs in with this address (its password sign-in, or an
 * address verified by a provider) gets a reset link; an unknown address gets nothing.
 */
async function sendResetLink(ctx: AppContext, email: string): Promise<void> {
  const db = ctx.db.primary;
  const { rows } = await db.query<{ account_id: string }>(
    `select account_id, 0 as rank from password_credentials where lower(email) = $1
      union all
     select id, 1 from accounts where lower(email) = $1 and email_verified
      order by rank limit 1`,
    [email],
  );
  const accountId = rows[0]?.account_id;
  if (!accountId) return;
  await db.transaction(async (tx) => {
    const link = await issueLink(tx, accountId, 'reset_password', email);
    await ctx.mail.enqueue(tx, { kind: 'reset-password', accountId, to: email, ...accountMail.resetPassword(pageLink(ctx, '/reset-password', link.token)), notAfter: link.expiresAt });
  });
}
