import { findAccount } from '@yumina/accounts';
import type { DbClient, Queryable } from '@yumina/db';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { endLinks, issueLink, LINK_TTL_MINUTES, useLink } from './account-links.ts';
import { accountMail } from './account-mail.ts';
import { requireAuth } from './auth.ts';
import { isReservedAddress } from './email-address.ts';
import { verifyPassword } from './password.ts';
import { limitAccountMail, limitPasswordCheck } from './request-limits.ts';

export const emailField = z.string().trim().normalize('NFKC').toLowerCase().pipe(z.email('must be an e-mail address')).pipe(z.string().max(254));
const tokenBody = z.strictObject({ token: z.string().max(200) });
const changeBody = z.strictObject({
  email: emailField.refine((e) => !isReservedAddress(e), 'must be an address that can receive mail'),
  password: z.string().max(200).optional(),
});

/** The platform's own page a link opens; the token rides in the fragment (never sent to a server). */
export const pageLink = (ctx: AppContext, path: string, token?: string) => `${ctx.config.publicOrigin}${path}${token ? `#token=${token}` : ''}`;

/** Queues the verification mail of the account's current address (in the caller's transaction). */
export async function sendVerification(ctx: AppContext, db: Queryable, account: { id: string; email: string; displayName: string }): Promise<void> {
  const link = await issueLink(db, account.id, 'verify_email', account.email);
  await ctx.mail.enqueue(db, {
    kind: 'verify-email',
    accountId: account.id,
    to: account.email,
    ...accountMail.verifyEmail(account.displayName, pageLink(ctx, '/verify-email', link.token)),
    notAfter: link.expiresAt,
  });
}

/** The address change an account asked for and has not confirmed yet, if any. */
export async function pendingEmail(db: Queryable, accountId: string): Promise<string | null> {
  const { rows } = await db.query<{ email: string }>(
    `select email from account_links where account_id = $1 and purpose = 'change_email' and used_at is null and expires_at > now() order by created_at desc limit 1`,
    [accountId],
  );
  return rows[0]?.email ?? null;
}

const SEND_AGAIN = 'Sign in and send a new link from Settings.';
/** An account without a password may change its address only from a login this recent. */
/** An account without a password proves it is its owner by a login this fresh (an address change, a deletion). */
export const REAUTH_MINUTES = 15;

/**
 * E-mail verification and address changes (issue 35, point 2):
 * - sign-up queues a verification link (routes.ts); POST /api/auth/email/verify uses it (any
 *   browser, signed in or not): single use, 24 h, only for the address the account still has;
 * - POST /api/auth/email/resend (signed in) sends a new one, limited per account and client;
 * - POST /api/account/email asks for a new address (the current password when the account has
 *   one, else a login made in the last 15 minutes): the new address gets a link and nothing changes until it is followed; then the account
 *   uses it, verified, and the old address is told. An address another account holds gets a
 *   notice instead of a link, and the answer is the same, so the route tells nobody which
 *   addresses have accounts.
 */
export async function emailRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.post('/api/auth/email/verify', async (request) => {
    const { token } = parseWith(tokenBody, request.body);
    const outcome = await db.transaction(async (tx) => {
      const link = await useLink(tx, ['verify_email', 'change_email'], token, SEND_AGAIN);
      const account = await findAccount(tx, link.accountId);
      if (!account) throw new HttpError(400, 'LINK_INVALID', `This link is not valid. ${SEND_AGAIN}`);
      if (link.purpose === 'verify_email') {
        // A link verifies the address it was sent to, and only while the account still uses it.
        if (account.email.toLowerCase() !== link.email.toLowerCase()) {
          throw new HttpError(410, 'LINK_USED', `This link is for an address the account no longer uses. ${SEND_AGAIN}`);
        }
        await tx.query('update accounts set email_verified = true where id = $1', [account.id]);
        return { purpose: link.purpose, email: link.email, previous: null, account };
      }
      await changeAddress(tx, account.id, link.email);
      return { purpose: link.purpose, email: link.email, previous: account.email, account };
    });
    if (outcome.purpose === 'change_email' && outcome.previous && !isReservedAddress(outcome.previous)) {
      await ctx.mail.enqueue(db, {
        kind: 'email-changed',
        accountId: outcome.account.id,
        to: outcome.previous,
        ...accountMail.emailChanged(outcome.account.displayName, outcome.email, pageLink(ctx, '/forgot-password')),
      });
    }
    request.log.info({ type: 'account.email-verified', accountId: outcome.account.id, purpose: outcome.purpose }, 'e-mail address verified');
    return { ok: true, purpose: outcome.purpose === 'verify_email' ? 'verified' : 'changed', email: outcome.email };
  });

  app.post('/api/auth/email/resend', async (request, reply) => {
    const { account } = await requireAuth(ctx, request, reply);
    if (isReservedAddress(account.email)) throw new HttpError(409, 'NO_ADDRESS', 'This account has no e-mail address to verify.');
    if (account.emailVerified) throw new HttpError(409, 'ALREADY_VERIFIED', 'Your e-mail address is already verified.');
    await limitAccountMail(ctx, request, 'verify-resend', { accountId: account.id });
    await db.transaction((tx) => sendVerification(ctx, tx, account));
    reply.code(202);
    return { ok: true, message: `We sent a new link to ${account.email}. It works once, for 24 hours; earlier links no longer work.` };
  });

  app.post('/api/account/email', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(changeBody, request.body);
    const { account } = auth;
    if (body.email === account.email.toLowerCase()) throw new HttpError(400, 'SAME_ADDRESS', 'This is already your address.');
    const { rows } = await db.query<{ password_hash: string }>('select password_hash from password_credentials where account_id = $1', [account.id]);
    if (rows[0]) {
      // Whoever holds the login must also know the password to move the account's address.
      if (!body.password) throw new HttpError(400, 'VALIDATION_FAILED', 'Enter your current password to change your address.');
      await limitPasswordCheck(ctx, account.id);
      if (!(await verifyPassword(body.password, rows[0].password_hash))) throw new HttpError(403, 'WRONG_PASSWORD', 'The current password is wrong.');
    } else {
      // No password to ask for: the login itself must be fresh (a stolen, older login cannot move the address).
      const fresh = await db.query('select 1 from login_sessions where id = $1 and created_at > now() - make_interval(mins => $2)', [auth.session.id, REAUTH_MINUTES]);
      if (!fresh.rowCount) {
        throw new HttpError(403, 'SIGN_IN_AGAIN', `For your safety, sign out and sign in again with your provider, then change your address within ${REAUTH_MINUTES} minutes.`);
      }
    }
    await limitAccountMail(ctx, request, 'email-change', { accountId: account.id });
    await db.transaction(async (tx) => {
      const taken = await tx.query(
        `select 1 from accounts where lower(email) = $1 and id <> $2
          union all select 1 from password_credentials where lower(email) = $1 and account_id <> $2`,
        [body.email, account.id],
      );
      if (taken.rowCount) {
        // The holder of the address hears of it; the asker learns nothing it could not already see.
        await ctx.mail.enqueue(tx, { kind: 'address-in-use', accountId: account.id, to: body.email, ...accountMail.addressInUse(body.email, pageLink(ctx, '/forgot-password')) });
        return;
      }
      const link = await issueLink(tx, account.id, 'change_email', body.email);
      await ctx.mail.enqueue(tx, {
        kind: 'confirm-new-email',
        accountId: account.id,
        to: body.email,
        ...accountMail.confirmNewEmail(account.displayName, body.email, pageLink(ctx, '/verify-email', link.token)),
        notAfter: link.expiresAt,
      });
    });
    reply.code(202);
    return {
      ok: true,
      pendingEmail: body.email,
      message: `We sent a link to ${body.email}. Your address changes when you follow it (within ${LINK_TTL_MINUTES.change_email / 60} hours); until then your account keeps ${account.email}.`,
    };
  });
}

/** Moves an account (and its password sign-in) to a new address, verified; refuses an address taken meanwhile. */
async function changeAddress(tx: DbClient, accountId: string, email: string): Promise<void> {
  try {
    await tx.query('update accounts set email = $2, email_verified = true where id = $1', [accountId, email]);
    await tx.query('update password_credentials set email = $2, updated_at = now() where account_id = $1', [accountId, email]);
    // Reset links mailed to the old address (or before the move) work no more.
    await endLinks(tx, accountId, ['reset_password']);
  } catch (err) {
    // The unique indexes decide (migration 088): the whole transaction rolls back, nothing changes.
    if ((err as { code?: string }).code !== '23505') throw err;
    throw new HttpError(409, 'EMAIL_TAKEN', 'Another account uses this address now, so your address was not changed.');
  }
}
