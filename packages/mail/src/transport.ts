/** One message as a transport sends it: plain text and HTML, always both. */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Where mail goes: Amazon SES (production), an SMTP server (SMTP_URL), or the local outbox folder. */
export interface MailTransport {
  readonly kind: 'ses' | 'smtp' | 'outbox';
  /** Sends one message; resolves with the id the transport gave it. Throws MailSendError. */
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): Promise<void>;
}

/**
 * A failed send. `permanent`: the transport refused this message for good (a rejected recipient,
 * an unverified sender), so it is not retried; otherwise (connection, throttling, a 4xx of SMTP)
 * the queue tries again later.
 */
export class MailSendError extends Error {
  readonly code = 'MAIL_SEND_FAILED';
  constructor(
    message: string,
    readonly permanent: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'MailSendError';
  }
}
