import type { APIRequestContext, BrowserContext, Page } from 'playwright-core';
import { linkIn, mailsTo, outboxOf, tokenOf, waitForMail } from './outbox.ts';
import { Browser } from './http-client.ts';

/**
 * The one way tests make a password account (issue 35, point 5: verify-first sign-up). The sign-up
 * answers 202 and signs nobody in; the account exists once the link mailed to the address is
 * followed. So this posts the sign-up, reads the link from the server's outbox (the embedded
 * default's mail transport, DATA_DIR/outbox), and follows it with the same client, which the
 * completion signs in. Throws when the sign-up or the completion is refused, with its answer.
 */

/** What signs up: the route tests' cookie client, a Chromium context or page (its cookies), or a request context. */
export type SignUpClient = Browser | BrowserContext | Page | APIRequestContext;

export interface SignUpDetails {
  /** Default: a fresh address under example.com. */
  email?: string;
  /** Default: 'long enough pw'. */
  password?: string;
  displayName?: string;
  username?: string;
  returnTo?: string;
  /** Extra request headers (e.g. X-Forwarded-For for a client address of the test's own). */
  headers?: Record<string, string>;
  /**
   * For benchmarks (bench/sign-up.ts), whose baseline may be an older revision of the server: there the
   * sign-up answered 201 with the account and a session, signing the client in at once. With this
   * set, such an answer is the result (no mail, no completion) instead of an error.
   */
  acceptSignedInAtOnce?: boolean;
}

export interface SignedUpAccount {
  id: string;
  email: string;
  displayName: string;
  emailVerified: boolean;
  username: string | null;
  [key: string]: unknown;
}

export interface SignedUp {
  /** The completion's status (201). */
  status: number;
  email: string;
  password: string;
  account: SignedUpAccount;
  session: { id: string; expiresAt: string };
  returnTo: string | null;
  /** The Set-Cookie lines of the completion (which signs the client in). */
  setCookie: string[];
}

/** Where the server's mails land: a test server (its DATA_DIR), or outbox folders given outright (several replicas). */
export type MailServer = { url: string; dataDir: string } | { url: string; outbox: string | string[] };

let counter = 0;
const freshEmail = () => `user-${Date.now()}-${process.pid}-${++counter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
const SUBJECT = /Finish creating your Yumina account/;

export const outboxesOf = (server: MailServer): string[] => ('outbox' in server ? [server.outbox].flat() : [outboxOf(server)]);

/** POSTs JSON through any client kind; the answer's status and parsed body. */
export async function postAs(
  server: { url: string },
  client: SignUpClient,
  path: string,
  json: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown; setCookie: string[] }> {
  if (client instanceof Browser) {
    const res = await client.fetch(path, { method: 'POST', json, headers });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null, setCookie: res.headers.getSetCookie() };
  }
  const request: APIRequestContext =
    'context' in client && typeof client.context === 'function' ? (client as Page).context().request : 'request' in client ? (client as BrowserContext).request : (client as APIRequestContext);
  const res = await request.post(`${server.url}${path}`, { data: json as object, headers });
  const text = await res.text();
  const setCookie = res.headersArray().filter((h) => h.name.toLowerCase() === 'set-cookie').map((h) => h.value);
  return { status: res.status(), body: text ? JSON.parse(text) : null, setCookie };
}

/** Waits for the next sign-up link mailed to `email` in any of the outboxes (the `count`-th overall). */
export async function signUpLink(server: MailServer, email: string, count: number): Promise<URL> {
  const dirs = outboxesOf(server);
  if (dirs.length === 1) return linkIn(await waitForMail(dirs[0]!, email, { subject: SUBJECT, count }), '/complete-signup');
  const until = Date.now() + 10_000;
  for (;;) {
    const mails = (await Promise.all(dirs.map((d) => mailsTo(d, email)))).flat().filter((m) => SUBJECT.test(m.subject));
    mails.sort((a, b) => a.id.localeCompare(b.id));
    if (mails.length >= count) return linkIn(mails[count - 1]!, '/complete-signup');
    if (Date.now() > until) throw new Error(`no sign-up mail #${count} to ${email}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function signUpMailCount(server: MailServer, email: string): Promise<number> {
  const all = await Promise.all(outboxesOf(server).map((d) => mailsTo(d, email)));
  return all.flat().filter((m) => SUBJECT.test(m.subject)).length;
}

/** Signs up through `client`, follows the mailed link with it, and returns the new account (the client is signed in). */
export async function signUp(server: MailServer, client: SignUpClient, details: SignUpDetails = {}): Promise<SignedUp> {
  const email = details.email ?? freshEmail();
  const password = details.password ?? 'long enough pw';
  const before = await signUpMailCount(server, email.toLowerCase());
  const body = {
    email,
    password,
    ...(details.displayName !== undefined ? { displayName: details.displayName } : {}),
    ...(details.username !== undefined ? { username: details.username } : {}),
    ...(details.returnTo !== undefined ? { returnTo: details.returnTo } : {}),
  };
  const asked = await postAs(server, client, '/api/auth/signup', body, details.headers);
  if (asked.status === 201 && details.acceptSignedInAtOnce) {
    const older = asked.body as { account?: SignedUpAccount; session?: { id: string; expiresAt: string } } | null;
    if (!older?.account || !older.session) throw new Error(`sign-up of ${email} answered 201 without an account and a session: ${JSON.stringify(asked.body)}`);
    return { status: asked.status, email, password, account: older.account, session: older.session, returnTo: null, setCookie: asked.setCookie };
  }
  if (asked.status !== 202) throw new Error(`sign-up of ${email} answered ${asked.status}: ${JSON.stringify(asked.body)}`);
  const token = tokenOf(await signUpLink(server, email.toLowerCase(), before + 1));
  const done = await postAs(server, client, '/api/auth/signup/complete', { token, password }, details.headers);
  if (done.status !== 201) throw new Error(`completing the sign-up of ${email} answered ${done.status}: ${JSON.stringify(done.body)}`);
  const result = done.body as { account: SignedUpAccount; session: { id: string; expiresAt: string }; returnTo: string | null };
  return { status: done.status, email, password, ...result, setCookie: done.setCookie };
}

/**
 * After the sign-up form was sent in Chromium: the page says to check the inbox; the link from the
 * outbox is opened in the same page (on the test server's address, so the cookie lands there), the
 * password chosen at sign-up is typed, the account is created and signed in, and "Continue" goes where the sign-up was asked to return.
 */
export async function finishSignUpInPage(server: MailServer, page: Page, email: string, password: string): Promise<void> {
  await page.getByTestId('signup-sent').waitFor();
  const before = await signUpMailCount(server, email.toLowerCase());
  const link = await signUpLink(server, email.toLowerCase(), Math.max(before, 1));
  await page.goto(`${server.url}${link.pathname}${link.hash}`);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Finish creating my account' }).click();
  await page.getByTestId('signup-done').waitFor();
  await page.getByRole('button', { name: 'Continue' }).click();
}
