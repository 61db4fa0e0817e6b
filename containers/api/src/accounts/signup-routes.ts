import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { findAccount, newId } from '@yumina/accounts';
import { grantCredits } from '@yumina/billing';
import type { Queryable } from '@yumina/db';
import { HttpError, parseWith } from '@yumina/http';
import { safeReturnTo } from '@yumina/identity/browser';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { linkRefusal } from './account-links.ts';
import { accountMail } from './account-mail.ts';
import { startLogin } from './auth.ts';
import { isReservedAddress } from './email-address.ts';
import { claimFirstAdministrator } from './first-admin.ts';
import { emailField, pageLink } from './email-routes.ts';
import { hashPassword, verifyPassword } from './password.ts';
import { newPassword } from './password-routes.ts';
import { displayNameField, usernameField } from './profile-routes.ts';
import { countPasswordHash, limitMailToAddress, limitPasswordHashing } from './request-limits.ts';

/**
 * Verify-first sign-up (issue 35, point 5: no route tells whether an address has an account).
 *
 * POST /api/auth/signup answers 202 with one fixed body whatever the address, and signs nobody in.
 * The password is hashed in both cases (the answer's timing says nothing either), then:
 * - a free address gets a link (`/complete-signup#token=<id>.<secret>`, pending_signups,
 *   migration 100: the secret's SHA-256 only, the password's scrypt hash, single use, 24 h; a new
 *   sign-up or resend for the address replaces the earlier link);
 * - an address that has an account gets a notice ("someone tried…; sign in or reset your
 *   password"), and nothing else changes.
 * POST /api/auth/signup/complete uses the link (any browser) with the password chosen at sign-up:
 * it creates the account, its address verified (following the link proved the mailbox), and signs
 * that browser in. Asking for the password again means a stranger who signed up with someone
 * else's address cannot have its owner, following the mail, create an account whose password the
 * stranger knows (pre-account takeover); a wrong password leaves the link usable, the fifth ends it.
 * POST /api/auth/signup/resend sends a new link (or the notice again) with the same answer.
 * Limits: SIGNUP_RATE_LIMIT_PER_HOUR sign-ups per client address; ACCOUNT_MAIL_RATE_LIMIT_PER_HOUR
 * sign-up mails per address (sign-ups and resends together) and four times as many resends per
 * client address; known and unknown addresses alike.
 */

const TTL_MINUTES = 24 * 60;
const TOKEN = /^([A-Za-z0-9_-]{22})\.([A-Za-z0-9_-]{43})$/;
const hashSecret = (secret: string) => createHash('sha256').update(secret).digest();
const SIGN_UP_AGAIN = 'Send a new link from this page, or sign up again.';

const signUpBody = z.strictObject({
  // The reserved .invalid domain is where accounts without an address keep their placeholder.
  email: emailField.refine((e) => !isReservedAddress(e), 'must be an address that can receive mail'),
  password: newPassword,
  displayName: displayNameField.optional(),
  username: usernameField.optional(),
  returnTo: z.string().max(2048).optional(),
});
const resendBody = z.strictObject({ email: emailField });
const tokenBody = z.strictObject({ token: z.string().max(200), password: z.string().min(1).max(1024) });
/** Wrong passwords a sign-up link allows; the last one ends it. */
const PASSWORD_TRIES = 5;

/** The one answer of a sign-up and of a resend, byte for byte the same whatever the address. */
const SENT = {
  status: 'verification_sent',
  message: 'Check your inbox: we sent a mail to this address. Follow its link within 24 hours to finish creating your account. Nothing arrived? Look in your spam folder, or send it again.',
} as const;

async function addressTaken(db: Queryable, email: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'select 1 from accounts where lower(email) = $1 union all select 1 from password_credentials where lower(email) = $1 limit 1',
    [email],
  );
  return (rowCount ?? 0) > 0;
}

interface PendingFields {
  email: string;
  passwordHash: string;
  displayName: string;
  username: string | null;
  returnTo: string | null;
}

/** A new pending sign-up for the address (earlier ones stop working) and its mail, in the caller's transaction. */
async function issuePending(ctx: AppContext, tx: Queryable, p: PendingFields): Promise<void> {
  await tx.query('update pending_signups set used_at = now() where lower(email) = $1 and used_at is null', [p.email]);
  const id = randomBytes(16).toString('base64url');
  const secret = randomBytes(32).toString('base64url');
  const { rows } = await tx.query<{ expires_at: Date }>(
    `insert into pending_signups (id, email, password_hash, display_name, username, return_to, secret_hash, expires_at)
     values ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(mins => $8)) returning expires_at`,
    [id, p.email, p.passwordHash, p.displayName, p.username, p.returnTo, hashSecret(secret), TTL_MINUTES],
  );
  await ctx.mail.enqueue(tx, {
    kind: 'signup-confirm',
    accountId: null,
    to: p.email,
    ...accountMail.confirmSignup(p.displayName, pageLink(ctx, '/complete-signup', `${id}.${secret}`)),
    notAfter: rows[0]!.expires_at,
  });
}

/** The holder of a taken address hears of the attempt; the asker learns nothing. */
function noticeHolder(ctx: AppContext, tx: Queryable, email: string): Promise<string> {
  return ctx.mail.enqueue(tx, {
    kind: 'signup-address-in-use',
    accountId: null,
    to: email,
    ...accountMail.signupAddressInUse(email, pageLink(ctx, '/login'), pageLink(ctx, '/forgot-password')),
  });
}

const TOO_MANY = 'Too many sign-up mails were asked for. Wait a while and try again; check your spam folder meanwhile.';

/** Sign-ups and resends share the address's sign-up mails (request-limits.ts limitMailToAddress). */
function limitSignup(ctx: AppContext, request: FastifyRequest, email: string): Promise<void> {
  return limitMailToAddress(ctx, request, 'signup-mail', email, { key: `signup:address:${request.ip}`, limit: ctx.config.limits.signupsPerHour }, TOO_MANY);
}

function limitResend(ctx: AppContext, request: FastifyRequest, email: string): Promise<void> {
  return limitMailToAddress(ctx, request, 'signup-mail', email, { key: `signup-resend:address:${request.ip}`, limit: ctx.config.limits.accountMailPerHour * 4 }, TOO_MANY);
}

export async function signupRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.post('/api/auth/signup', async (request, reply) => {
    const body = parseWith(signUpBody, request.body);
    // Its hash is bounded by the sign-ups allowed per client address (SIGNUP_RATE_LIMIT_PER_HOUR).
    await limitSignup(ctx, request, body.email);
    // A username belongs to the account's public profile: saying it is taken says nothing about the address.
    if (body.username) {
      const { rowCount } = await db.query('select 1 from accounts where username = $1', [body.username]);
      if (rowCount) throw new HttpError(409, 'USERNAME_TAKEN', 'This username is taken.');
    }
    // Hashed in both cases, so the time the answer takes does not tell them apart.
    countPasswordHash(ctx, 'signup');
    const passwordHash = await hashPassword(body.password, ctx.config.auth.passwordHashCost);
    const returnTo = body.returnTo === undefined ? null : safeReturnTo(body.returnTo, ctx.config.publicOrigin, '/app/settings');
    await db.transaction(async (tx) => {
      if (await addressTaken(tx, body.email)) await noticeHolder(ctx, tx, body.email);
      else
        await issuePending(ctx, tx, {
          email: body.email,
          passwordHash,
          displayName: body.displayName ?? body.email.split('@')[0]!,
          username: body.username ?? null,
          returnTo,
        });
    });
    ctx.mail.wake();
    reply.code(202).header('cache-control', 'no-store');
    return SENT;
  });

  app.post('/api/auth/signup/resend', async (request, reply) => {
    const { email } = parseWith(resendBody, request.body);
    await limitResend(ctx, request, email);
    await db.transaction(async (tx) => {
      if (await addressTaken(tx, email)) {
        await noticeHolder(ctx, tx, email);
        return;
      }
      // The latest sign-up for the address, if any (an expired or replaced one too: its details are kept a week).
      const { rows } = await tx.query<{ email: string; password_hash: string; display_name: string; username: string | null; return_to: string | null }>(
        `select email, password_hash, display_name, username, return_to from pending_signups
          where lower(email) = $1 order by created_at desc limit 1 for update`,
        [email],
      );
      const p = rows[0];
      if (p) await issuePending(ctx, tx, { email: p.email, passwordHash: p.password_hash, displayName: p.display_name, username: p.username, returnTo: p.return_to });
    });
    ctx.mail.wake();
    reply.code(202).header('cache-control', 'no-store');
    return SENT;
  });

  app.post('/api/auth/signup/complete', async (request, reply) => {
    const { token, password } = parseWith(tokenBody, request.body);
    await limitPasswordHashing(ctx, request);
    const created = await db.transaction(async (tx) => {
      // The link is checked (usePending) before the password is: a made-up token costs no hash.
      const pending = await usePending(tx, token);
      countPasswordHash(ctx, 'signup-complete');
      if (!(await verifyPassword(password, pending.passwordHash))) {
        // Not used after all; the attempt counts, and the last one allowed ends the link.
        const { rows } = await tx.query<{ left: number }>(
          `update pending_signups set failed_attempts = failed_attempts + 1,
                  used_at = case when failed_attempts + 1 >= $2 then now() else null end
            where id = $1 returning $2 - failed_attempts as left`,
          [pending.id, PASSWORD_TRIES],
        );
        return { wrongPassword: true as const, left: Number(rows[0]?.left ?? 0), firstAdministrator: false };
      }
      const id = newId('acc');
      try {
        const inserted = await tx.query(
          `insert into accounts (id, email, email_verified, username, display_name)
           select $1, $2, true, $3, $4 where not exists (select 1 from retired_account_ids where id = $1)`,
          [id, pending.email, pending.username, pending.displayName],
        );
        if (inserted.rowCount !== 1) throw new HttpError(409, 'RETRY', 'Please try again.');
        await tx.query('insert into password_credentials (account_id, email, password_hash) values ($1, $2, $3)', [id, pending.email, pending.passwordHash]);
      } catch (err) {
        const e = err as { code?: string; constraint?: string };
        const constraint = e.code === '23505' ? e.constraint : undefined;
        // Only the holder of the mailbox reaches this: the address got an account meanwhile.
        if (constraint === 'password_credentials_email_key' || constraint === 'accounts_email_key') {
          throw new HttpError(409, 'EMAIL_TAKEN', 'This address has an account already. Sign in, or reset your password from the sign-in page.');
        }
        if (constraint === 'accounts_username_key') throw new HttpError(409, 'USERNAME_TAKEN', 'The username you chose was taken meanwhile. Sign up again with another one.');
        throw err;
      }
      await tx.query('update pending_signups set used_at = now() where lower(email) = $1 and used_at is null', [pending.email]);
      const firstAdministrator = await claimFirstAdministrator(ctx, tx, id);
      return { id, returnTo: pending.returnTo, wrongPassword: false as const, left: 0, firstAdministrator };
    });
    if (created.wrongPassword) {
      throw created.left > 0
        ? new HttpError(400, 'WRONG_PASSWORD', `That is not the password you chose when signing up. Type the same one to finish (${created.left} ${created.left === 1 ? 'try' : 'tries'} left).`)
        : new HttpError(410, 'LINK_USED', `That was not the password chosen at sign-up, five times: this link no longer works. ${SIGN_UP_AGAIN}`);
    }
    // With the platform's provider on, a newcomer can play at once on welcome credits.
    if (ctx.config.ai.official && ctx.config.welcomeCredits > 0) await grantCredits(db, created.id, ctx.config.welcomeCredits, null, 'Welcome credits');
    const session = await startLogin(ctx, reply, created.id, request);
    request.log.info({ type: 'account.created', accountId: created.id }, 'account created from a sign-up link');
    if (created.firstAdministrator) request.log.info({ type: 'account.first-administrator', accountId: created.id }, 'the first account of this install is its administrator');
    reply.code(201).header('cache-control', 'no-store');
    return {
      account: await findAccount(db, created.id),
      session: { id: session.id, expiresAt: session.expiresAt.toISOString() },
      returnTo: created.returnTo,
      // Told on the page that finishes the sign-up (issue 44, point 2).
      ...(created.firstAdministrator ? { firstAdministrator: true } : {}),
    };
  });
}

/** Uses a sign-up link inside the transaction (row locked): valid once, then never again; else the refusal. */
async function usePending(tx: Queryable, token: string): Promise<PendingFields & { id: string }> {
  const parts = TOKEN.exec(token);
  if (!parts) throw linkRefusal('invalid', SIGN_UP_AGAIN);
  const { rows } = await tx.query<{ email: string; password_hash: string; display_name: string; username: string | null; return_to: string | null; secret_hash: Buffer; used_at: Date | null; expired: boolean }>(
    `select email, password_hash, display_name, username, return_to, secret_hash, used_at, expires_at <= now() as expired
       from pending_signups where id = $1 for update`,
    [parts[1]],
  );
  const row = rows[0];
  // Compared in constant time; a row whose secret does not match says no more than no row.
  const matches = timingSafeEqual(hashSecret(parts[2]!), row?.secret_hash ?? hashSecret('')) && row !== undefined;
  if (!row || !matches) throw linkRefusal('invalid', SIGN_UP_AGAIN);
  if (row.used_at) throw linkRefusal('used', SIGN_UP_AGAIN);
  if (row.expired) throw linkRefusal('expired', SIGN_UP_AGAIN);
  await tx.query('update pending_signups set used_at = now() where id = $1', [parts[1]]);
  return { id: parts[1]!, email: row.email, passwordHash: row.password_hash, displayName: row.display_name, username: row.username, returnTo: row.return_to };
}

/** Scheduled maintenance: forget sign-ups that ended more than a week ago. */
export async function purgeOldSignups(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`delete from pending_signups where coalesce(used_at, expires_at) < now() - interval '7 days'`);
  return rowCount ?? 0;
}
