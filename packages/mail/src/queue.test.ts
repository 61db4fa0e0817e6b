import type { DbPool } from '@yumina/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type MigratedDatabase } from '../../../tests/support/postgres.ts';
import { MailQueue, type MailRequest } from './queue.ts';
import { MailSendError, type MailTransport, type OutgoingMail } from './transport.ts';

/** A transport that records what it sends and fails as told (the transports themselves: transports.test.ts). */
function scriptedTransport(failures: (MailSendError | null)[] = []): MailTransport & { sent: OutgoingMail[]; calls: number } {
  const t = {
    kind: 'outbox' as const,
    sent: [] as OutgoingMail[],
    calls: 0,
    async send(mail: OutgoingMail) {
      const failure = failures[t.calls++];
      if (failure) throw failure;
      t.sent.push(mail);
      return { messageId: `m${t.sent.length}` };
    },
    async close() {},
  };
  return t;
}

const logs: { level: string; obj: Record<string, unknown> }[] = [];
const log = {
  info: (obj: object) => logs.push({ level: 'info', obj: obj as Record<string, unknown> }),
  warn: (obj: object) => logs.push({ level: 'warn', obj: obj as Record<string, unknown> }),
  error: (obj: object) => logs.push({ level: 'error', obj: obj as Record<string, unknown> }),
};
const TOKEN = 'tok.SECRET-VALUE-THAT-MUST-NOT-LEAK';
const request = (over: Partial<MailRequest> = {}): MailRequest => ({
  kind: 'reset-password',
  accountId: 'acc_test',
  to: 'reader@example.com',
  subject: 'Reset your password',
  text: `https://platform.test/reset-password#token=${TOKEN}`,
  html: `<a href="https://platform.test/reset-password#token=${TOKEN}">Reset</a>`,
  ...over,
});

describe('the mail queue (real PostgreSQL)', () => {
  let database: MigratedDatabase;
  let db: DbPool;
  const key = Buffer.alloc(32, 3);
  const row = async (id: string) =>
    (await db.query<{ status: string; attempts: number; payload: Buffer | null; next_attempt_at: Date; last_error: string | null }>('select * from mail_queue where id = $1', [id])).rows[0]!;
  /** Makes a queued message due now (the test does not wait out a backoff). */
  const due = (id: string) => db.query(`update mail_queue set next_attempt_at = now() where id = $1`, [id]);

  beforeAll(async () => {
    database = await createMigratedDatabase();
    db = database.db;
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('an enqueue sends nothing; the worker sends it once, and the row keeps no content', async () => {
    const transport = scriptedTransport();
    const queue = new MailQueue({ db, transport, from: 'Yumina <no-reply@platform.test>', key, log });
    const id = await queue.enqueue(db, request());
    expect(transport.calls).toBe(0);
    const stored = await row(id);
    expect(stored.status).toBe('queued');
    // Sealed: the link's token is not in the database in the clear.
    expect(stored.payload!.toString('latin1')).not.toContain('SECRET-VALUE');
    expect(await queue.runOnce()).toBe(1);
    expect(await queue.runOnce()).toBe(0);
    const { to, subject, text, html } = request();
    expect(transport.sent).toEqual([{ from: 'Yumina <no-reply@platform.test>', to, subject, text, html }]);
    const sent = await row(id);
    expect(sent.status).toBe('sent');
    expect(sent.payload).toBeNull();
    expect(logs.find((l) => l.obj.mailId === id && l.obj.type === 'mail.sent')?.obj).toMatchObject({ kind: 'reset-password', accountId: 'acc_test' });
  });

  it('retries a temporary failure with growing delays, gives up after the last try, and logs the account id but never the content', async () => {
    const soft = new MailSendError('SMTP: connect ECONNREFUSED', false);
    const transport = scriptedTransport([soft, soft, soft]);
    const queue = new MailQueue({ db, transport, from: 'f@platform.test', key, log, baseDelayMs: 10_000, maxAttempts: 3 });
    const id = await queue.enqueue(db, request({ accountId: 'acc_retry' }));
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      const before = Date.now();
      expect(await queue.runOnce()).toBe(1);
      const r = await row(id);
      if (attempt < 3) {
        expect(r.status).toBe('queued');
        expect(r.attempts).toBe(attempt);
        delays.push(r.next_attempt_at.getTime() - before);
        expect(await queue.runOnce()).toBe(0); // not due yet
        await due(id);
      } else {
        expect(r.status).toBe('failed');
        expect(r.payload).toBeNull();
        expect(r.last_error).toContain('ECONNREFUSED');
      }
    }
    // 10 s then 20 s, each ±20 %.
    expect(delays[0]).toBeGreaterThan(7_500);
    expect(delays[0]).toBeLessThan(12_500);
    expect(delays[1]).toBeGreaterThan(15_500);
    expect(delays[1]).toBeLessThan(24_500);
    const mine = logs.filter((l) => l.obj.mailId === id);
    expect(mine.map((l) => l.level)).toEqual(['warn', 'warn', 'error']);
    for (const l of mine) expect(l.obj.accountId).toBe('acc_retry');
    expect(JSON.stringify(logs)).not.toContain('SECRET-VALUE');
    expect(JSON.stringify(logs)).not.toContain('reader@example.com');
  });

  it('a permanent refusal is not retried; a link that expired before it could be sent is not sent', async () => {
    const transport = scriptedTransport([new MailSendError('SES: MessageRejected: Email address is not verified', true)]);
    const queue = new MailQueue({ db, transport, from: 'f@platform.test', key, log });
    const refused = await queue.enqueue(db, request());
    await queue.runOnce();
    expect((await row(refused)).status).toBe('failed');
    const late = await queue.enqueue(db, request({ notAfter: new Date(Date.now() - 1000) }));
    await queue.runOnce();
    expect((await row(late)).status).toBe('failed');
    expect((await row(late)).last_error).toMatch(/expired/);
    expect(transport.calls).toBe(1);
  });

  it('rolls back with the transaction that queued it, and two workers never send one message twice', async () => {
    const transport = scriptedTransport();
    const a = new MailQueue({ db, transport, from: 'f@platform.test', key, log });
    const b = new MailQueue({ db, transport, from: 'f@platform.test', key, log });
    await db.transaction(async (tx) => {
      await a.enqueue(tx, request({ subject: 'rolled back' }));
      throw new Error('the sign-up failed');
    }).catch(() => {});
    for (let i = 0; i < 12; i++) await a.enqueue(db, request({ subject: `m${i}` }));
    let handled = 0;
    while (true) {
      const [x, y] = await Promise.all([a.runOnce(), b.runOnce()]);
      handled += x + y;
      if (x + y === 0) break;
    }
    expect(handled).toBe(12);
    expect(transport.sent.map((m) => m.subject).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `m${i}`).sort());
  });

  it('content sealed under another key is abandoned, not sent', async () => {
    const transport = scriptedTransport();
    const id = await new MailQueue({ db, transport, from: 'f@platform.test', key: Buffer.alloc(32, 9), log }).enqueue(db, request());
    await new MailQueue({ db, transport, from: 'f@platform.test', key, log }).runOnce();
    expect((await row(id)).status).toBe('failed');
    expect(transport.calls).toBe(0);
  });

  it('the running worker sends what is queued without being asked, and stops cleanly', async () => {
    const transport = scriptedTransport();
    const queue = new MailQueue({ db, transport, from: 'f@platform.test', key, log, pollMs: 50 });
    queue.start();
    try {
      await queue.enqueue(db, request({ subject: 'by the worker' }));
      await expect.poll(() => transport.sent.some((m) => m.subject === 'by the worker'), { timeout: 5_000 }).toBe(true);
    } finally {
      await queue.stop();
    }
  });

  it('an idle worker does no work (issue 51, point 8): the running worker retries a failed message when its retry is due, without a poll', async () => {
    const transport = scriptedTransport([new MailSendError('SMTP: connect ECONNREFUSED', false)]);
    // the fallback sweep far away: only the enqueue and the retry's own timer can wake the worker
    const queue = new MailQueue({ db, transport, from: 'f@platform.test', key, log, pollMs: 600_000, baseDelayMs: 300, maxDelayMs: 300 });
    queue.start();
    try {
      await queue.enqueue(db, request({ subject: 'second time lucky' }));
      await expect.poll(() => transport.sent.some((m) => m.subject === 'second time lucky'), { timeout: 5_000 }).toBe(true);
      expect(transport.calls).toBe(2);
    } finally {
      await queue.stop();
    }
  });
});
