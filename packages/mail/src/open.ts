import type { Config } from '@yumina/config';
import { outboxTransport } from './outbox.ts';
import { sesTransport } from './ses.ts';
import { smtpTransport } from './smtp.ts';
import type { MailTransport } from './transport.ts';

/** The transport the configuration names: SES (the linked Email component), SMTP (SMTP_URL), or the outbox folder. */
export function openMailTransport(mail: Config['mail']): MailTransport {
  if (mail.transport === 'ses') return sesTransport({ configurationSet: mail.sesConfigurationSet });
  if (mail.transport === 'smtp') return smtpTransport(mail.smtpUrl!);
  return outboxTransport(mail.outboxDir);
}
