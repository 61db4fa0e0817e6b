import { randomBytes } from 'node:crypto';
import type { Queryable } from '@yumina/db';
import { MailSeal } from './seal.ts';
import { MailSendError, type MailTransport } from './transport.ts';

/** A message to queue: what it is (for logs), whose it is, and its content. */
export interface MailRequest {
  /** What the message is, e.g. `verify-email`: logged with the account id, never the content. */
  kind: string;
  /** The account it concerns (logged); null for none. */
  accountId: string | null;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Not sent after this time (a link that expired by then is no use): marked failed instead. */
  notAfter?: Date;
}

export interface MailLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface MailQueueOptions {
  db: Queryable;
  transport: MailTransport;
  /** The From header of every message. */
  from: string;
  /** 32 bytes: seals queued content (see seal.ts). */
  key: Buffer;
  log: MailLog;
  /**
   * The fallback sweep: how often an idle replica looks for due messages anyway (default 60 s: a
   * message another replica queued and could not send, a claim a dead replica left). An enqueue
   * wakes the worker at once, and a retry wakes it when it is due: an idle replica does no work.
   */
  pollMs?: number;
  /** The first retry's delay (default 30 s); each further retry doubles it, up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Tries before a message is given up (default 8: about two hours of retries). */
  maxAttempts?: number;
  /** How long a claimed message stays claimed (a replica that died mid-send releases it then). */
  claimMs?: number;
}

interface Claimed {
  id: string;
  kind: string;
  account_id: string | null;
  payload: Buffer;
  attempts: number;
  not_after: Date | null;
}

interface Sealed {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/**
 * The mail queue: a request only inserts a row (in its own transaction, so a message exists
 * exactly when what it announces does); each replica's worker claims due rows (FOR UPDATE SKIP
 * LOCKED, so two replicas never send one message twice while its claim lasts), sends them, and on
 * a temporary failure tries again later with exponential backoff and jitter. Failures are logged
 * with the message id, kind and account id; never with the content (it holds links with tokens).
 * A sent or abandoned message keeps no content.
 */
export class MailQueue {
  readonly #o: Required<Omit<MailQueueOptions, 'db' | 'transport' | 'from' | 'key' | 'log'>> & MailQueueOptions;
  readonly #seal: MailSeal;
  #timer: NodeJS.Timeout | undefined;
  #wake: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;

  constructor(options: MailQueueOptions) {
    this.#o = { pollMs: 60_000, baseDelayMs: 30_000, maxDelayMs: 3_600_000, maxAttempts: 8, claimMs: 120_000, ...options };
    this.#seal = new MailSeal(options.key);
  }

  get transport(): MailTransport {
    return this.#o.transport;
  }

  /** Queues one message through `db` (a pool, or the caller's transaction); returns its id. Sends nothing. */
  async enqueue(db: Queryable, mail: MailRequest): Promise<string> {
    const id = `mail_${randomBytes(12).toString('base64url')}`;
    const payload: Sealed = { to: mail.to, subject: mail.subject, text: mail.text, html: mail.html };
    await db.query('insert into mail_queue (id, kind, account_id, payload, not_after) values ($1, $2, $3, $4, $5)', [
      id,
      mail.kind,
      mail.accountId,
      this.#seal.seal(payload),
      mail.notAfter ?? null,
    ]);
    // The caller's transaction commits a moment later: looked for at once, and once more after a second.
    this.wake(30);
    setTimeout(() => this.wake(0), 1000).unref();
    return id;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#timer = setInterval(() => this.wake(0), this.#o.pollMs);
    this.#timer.unref();
    this.wake(0);
  }

  /** Runs the worker soon (coalesced). */
  wake(delayMs = 0): void {
    if (this.#stopped || this.#wake) return;
    this.#wake = setTimeout(() => {
      this.#wake = undefined;
      void this.#kick();
    }, delayMs);
    this.#wake.unref();
  }

  async #kick(): Promise<void> {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      do {
        this.#again = false;
        try {
          let handled = 0;
          for (let n; !this.#stopped && (n = await this.runOnce()) > 0; ) handled += n;
          // a message that failed waits for its retry: the worker wakes when it is due, not before
          if (handled > 0) await this.#wakeForRetry();
        } catch (err) {
          this.#o.log.warn({ type: 'mail.worker', err: (err as Error).message }, 'mail queue: poll failed; trying again');
        }
      } while (this.#again && !this.#stopped);
    })();
    try {
      await this.#running;
    } finally {
      this.#running = undefined;
    }
  }

  #retry: NodeJS.Timeout | undefined;
  async #wakeForRetry(): Promise<void> {
    const { rows } = await this.#o.db.query<{ due: Date | null }>(`select min(next_attempt_at) as due from mail_queue where status = 'queued'`);
    const due = rows[0]?.due;
    if (!due || this.#stopped) return;
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.wake(0), Math.max(0, due.getTime() - Date.now()) + 50);
    this.#retry.unref();
  }

  /** Stops polling and waits for a send in flight; closes the transport. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    clearTimeout(this.#wake);
    clearTimeout(this.#retry);
    this.#wake = undefined;
    await this.#running?.catch(() => {});
    await this.#o.transport.close();
  }

  /** Claims and sends the due messages (at most 10); returns how many it handled. */
  async runOnce(): Promise<number> {
    const { rows } = await this.#o.db.query<Claimed & Record<string, unknown>>(
      `update mail_queue q set attempts = q.attempts + 1, locked_until = now() + make_interval(secs => $1)
        where q.id in (select id from mail_queue
                        where status = 'queued' and next_attempt_at <= now() and (locked_until is null or locked_until < now())
                        order by next_attempt_at limit 10 for update skip locked)
        returning q.id, q.kind, q.account_id, q.payload, q.attempts, q.not_after`,
      [this.#o.claimMs / 1000],
    );
    for (const row of rows) await this.#deliver(row);
    return rows.length;
  }

  async #deliver(row: Claimed): Promise<void> {
    const { db, log, transport } = this.#o;
    const about = { mailId: row.id, kind: row.kind, accountId: row.account_id, attempt: row.attempts };
    if (row.not_after && row.not_after.getTime() < Date.now()) {
      await this.#giveUp(row.id, 'expired before it could be sent');
      log.error({ type: 'mail.failed', ...about }, 'mail abandoned: its link expired before it could be sent');
      return;
    }
    let content: Sealed;
    try {
      content = this.#seal.open<Sealed>(row.payload);
    } catch {
      await this.#giveUp(row.id, 'cannot be opened (SECRETS_KEY changed)');
      log.error({ type: 'mail.failed', ...about }, 'mail abandoned: its content was sealed under another SECRETS_KEY');
      return;
    }
    try {
      const sent = await transport.send({ from: this.#o.from, ...content });
      await db.query(`update mail_queue set status = 'sent', sent_at = now(), payload = null, locked_until = null, last_error = null where id = $1`, [row.id]);
      log.info({ type: 'mail.sent', ...about, transport: transport.kind, messageId: sent.messageId }, 'mail sent');
    } catch (err) {
      const failure = err instanceof MailSendError ? err : new MailSendError((err as Error).message, false, { cause: err });
      if (failure.permanent || row.attempts >= this.#o.maxAttempts) {
        await this.#giveUp(row.id, failure.message);
        log.error({ type: 'mail.failed', ...about, transport: transport.kind, err: failure.message }, 'mail abandoned');
        return;
      }
      const delay = this.retryDelayMs(row.attempts);
      await db.query(
        `update mail_queue set next_attempt_at = now() + make_interval(secs => $2), locked_until = null, last_error = $3 where id = $1`,
        [row.id, delay / 1000, failure.message.slice(0, 500)],
      );
      log.warn({ type: 'mail.retry', ...about, transport: transport.kind, retryInMs: Math.round(delay), err: failure.message }, 'mail not sent; will retry');
    }
  }

  /** Exponential backoff with ±20 % jitter: base × 2^(attempt−1), at most maxDelayMs. */
  retryDelayMs(attempt: number): number {
    const exact = Math.min(this.#o.baseDelayMs * 2 ** Math.max(0, attempt - 1), this.#o.maxDelayMs);
    return exact * (0.8 + Math.random() * 0.4);
  }

  async #giveUp(id: string, reason: string): Promise<void> {
    await this.#o.db.query(`update mail_queue set status = 'failed', payload = null, locked_until = null, last_error = $2 where id = $1`, [id, reason.slice(0, 500)]);
  }
}

/** Scheduled maintenance: forget sent and abandoned messages after a week. */
export async function purgeOldMail(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(`delete from mail_queue where status <> 'queued' and created_at < now() - interval '7 days'`);
  return rowCount ?? 0;
}
