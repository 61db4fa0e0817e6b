import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type OutboxMail, readOutbox } from '@yumina/mail';

/** The outbox folder of a test server (the embedded default's mail transport: DATA_DIR/outbox). */
export const outboxOf = (server: { dataDir: string }) => join(server.dataDir, 'outbox');

/**
 * The messages read so far, per outbox folder and id. A message's file is written whole and renamed
 * into place, never changed after, so each is read once: a wait for the next mail reads only the
 * files that appeared since (reading the whole outbox on every 100 ms poll made a test's n-th
 * sign-up read all n - 1 mails before it, several times).
 */
const read = new Map<string, Map<string, OutboxMail>>();

/** Every message sent to `to` so far, oldest first. */
export async function mailsTo(dir: string, to: string): Promise<OutboxMail[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  let known = read.get(dir);
  if (!known) read.set(dir, (known = new Map()));
  const ids = names.filter((n) => n.endsWith('.json')).map((n) => n.slice(0, -5)).sort();
  const fresh = ids.filter((id) => !known.has(id));
  for (const mail of await Promise.all(fresh.map((id) => readOutbox(dir, id)))) if (mail) known.set(mail.id, mail);
  return ids.flatMap((id) => (known.get(id)?.to === to ? [known.get(id)!] : []));
}

/**
 * Waits until the `count`-th message to `to` (optionally of a subject) has been sent by the queue's
 * worker, and returns it. The worker polls every second, so this waits at most a few.
 */
export async function waitForMail(dir: string, to: string, options: { subject?: RegExp; count?: number; timeoutMs?: number } = {}): Promise<OutboxMail> {
  const count = options.count ?? 1;
  const until = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    const mails = (await mailsTo(dir, to)).filter((m) => !options.subject || options.subject.test(m.subject));
    if (mails.length >= count) return mails[count - 1]!;
    if (Date.now() > until) throw new Error(`no mail #${count} to ${to}${options.subject ? ` matching ${options.subject}` : ''} (have: ${mails.map((m) => m.subject).join('; ') || 'none'})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The platform link of a message (the first URL to `path`), which both its text and HTML carry. */
export function linkIn(mail: OutboxMail, path: string): URL {
  const found = mail.text.match(new RegExp(`https?://[^\\s]+${path.replace(/[/]/g, '\\/')}#token=[A-Za-z0-9_.-]+`));
  if (!found) throw new Error(`no ${path} link in “${mail.subject}”`);
  const url = new URL(found[0]);
  if (!mail.html.includes(found[0])) throw new Error(`the HTML part of “${mail.subject}” lacks the link`);
  return url;
}

/** The token of a link (`#token=<id>.<secret>`). */
export const tokenOf = (url: URL) => new URLSearchParams(url.hash.slice(1)).get('token')!;
