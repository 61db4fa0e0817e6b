import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { MailTransport, OutgoingMail } from './transport.ts';

/** A message in the outbox folder: one JSON file per message. */
export interface OutboxMail extends OutgoingMail {
  id: string;
  date: string;
}

const ID = /^\d{8}T\d{9}Z-[A-Za-z0-9_-]{8,}$/;

/**
 * The embedded default: every message becomes `<outbox>/<id>.json` (written whole, then renamed
 * into place), where the development page /dev/outbox lists it. Nothing leaves the machine.
 */
export function outboxTransport(dir: string): MailTransport {
  // The last id's time: two messages sent in the same millisecond get ids a millisecond apart, in
  // the order they were sent (the random part alone would list them in either order).
  let last = 0;
  return {
    kind: 'outbox',
    async send(mail: OutgoingMail) {
      await mkdir(dir, { recursive: true });
      const now = new Date();
      last = Math.max(now.getTime(), last + 1);
      // Sortable by name: the time (to the millisecond, strictly increasing per transport), then randomness.
      const id = `${new Date(last).toISOString().replace(/[-:.]/g, '')}-${randomBytes(6).toString('base64url')}`;
      const record: OutboxMail = { id, date: now.toISOString(), ...mail };
      const file = join(dir, `${id}.json`);
      await writeFile(`${file}.tmp`, JSON.stringify(record, null, 2));
      await rename(`${file}.tmp`, file);
      return { messageId: id };
    },
    async close() {},
  };
}

/** The outbox, newest first (at most `limit` messages). */
export async function listOutbox(dir: string, limit = 200): Promise<OutboxMail[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const ids = names
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -5))
    .filter((id) => ID.test(id))
    .sort()
    .reverse()
    .slice(0, limit);
  const mails = await Promise.all(ids.map((id) => readOutbox(dir, id)));
  return mails.filter((m): m is OutboxMail => m !== null);
}

/** One message of the outbox, or null (also for anything that is not an outbox id). */
export async function readOutbox(dir: string, id: string): Promise<OutboxMail | null> {
  if (!ID.test(id)) return null;
  try {
    return JSON.parse(await readFile(join(dir, `${id}.json`), 'utf8')) as OutboxMail;
  } catch {
    return null;
  }
}
