import { join } from 'node:path';
import { listOutbox, type OutboxMail } from '@yumina/mail';

/** The outbox folder of a test server (the embedded default's mail transport: DATA_DIR/outbox). */
export const outboxOf = (server: { dataDir: string }) => join(server.dataDir, 'outbox');

/** Every message sent to `to` so far, oldest first. */
export async function mailsTo(dir: string, to: string): Promise<OutboxMail[]> {
  return (await listOutbox(dir, 10_000)).filter((m) => m.to === to).reverse();
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
