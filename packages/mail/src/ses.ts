import { SendEmailCommand, SESv2Client, type SESv2ClientConfig } from '@aws-sdk/client-sesv2';
import { MailSendError, type MailTransport, type OutgoingMail } from './transport.ts';

/** SES errors that no retry can fix: the message, its sender or the account is refused. */
const PERMANENT = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'AccountSuspendedException',
  'BadRequestException',
  'NotFoundException',
]);

export interface SesOptions {
  /** The configuration set of the linked Email component (its events), if any. */
  configurationSet?: string;
  /** The SDK client's settings; production passes none (region and credentials from the task's role). */
  client?: SESv2ClientConfig;
}

/** Amazon SES (API v2, SendEmail with a simple message of text and HTML). */
export function sesTransport(options: SesOptions = {}): MailTransport {
  const client = new SESv2Client(options.client ?? {});
  return {
    kind: 'ses',
    async send(mail: OutgoingMail) {
      try {
        const out = await client.send(
          new SendEmailCommand({
            FromEmailAddress: mail.from,
            Destination: { ToAddresses: [mail.to] },
            ConfigurationSetName: options.configurationSet,
            Content: {
              Simple: {
                Subject: { Data: mail.subject, Charset: 'UTF-8' },
                Body: { Text: { Data: mail.text, Charset: 'UTF-8' }, Html: { Data: mail.html, Charset: 'UTF-8' } },
              },
            },
          }),
        );
        return { messageId: out.MessageId ?? '' };
      } catch (err) {
        const name = (err as { name?: string }).name ?? '';
        throw new MailSendError(`SES: ${name}: ${(err as Error).message}`, PERMANENT.has(name), { cause: err });
      }
    },
    async close() {
      client.destroy();
    },
  };
}
