import nodemailer from 'nodemailer';
import { MailSendError, type MailTransport, type OutgoingMail } from './transport.ts';

/**
 * SMTP through nodemailer (SMTP_URL: `smtp://user:pass@host:587` upgrades with STARTTLS when the
 * server offers it, `smtps://…:465` is TLS from the start). One pooled connection set per process.
 */
export function smtpTransport(url: string): MailTransport {
  const transporter = nodemailer.createTransport({
    url,
    pool: true,
    maxConnections: 2,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    kind: 'smtp',
    async send(mail: OutgoingMail) {
      try {
        const info = await transporter.sendMail({ from: mail.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
        return { messageId: info.messageId };
      } catch (err) {
        const code = (err as { responseCode?: number }).responseCode;
        // 5xx: the server refused this message for good; anything else (4xx, no connection) may pass later.
        const permanent = typeof code === 'number' && code >= 500 && code < 600;
        throw new MailSendError(`SMTP: ${(err as Error).message}`, permanent, { cause: err });
      }
    },
    async close() {
      transporter.close();
    },
  };
}
