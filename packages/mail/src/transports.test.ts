import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listOutbox, outboxTransport, readOutbox } from './outbox.ts';
import { sesTransport } from './ses.ts';
import { smtpTransport } from './smtp.ts';
import { MailSendError, type OutgoingMail } from './transport.ts';

const mail: OutgoingMail = {
  from: 'Yumina <no-reply@platform.test>',
  to: 'reader@example.com',
  subject: 'Verify your e-mail — Yumina',
  text: 'Open this link: https://platform.test/verify-email#token=abc.def\n',
  html: '<p>Open <a href="https://platform.test/verify-email#token=abc.def">this link</a></p>',
};

/** Decodes a MIME part's quoted-printable body (soft line breaks, =XX bytes). */
const unQuote = (s: string) =>
  Buffer.from(s.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(parseInt(h, 16))), 'latin1').toString('utf8');

describe('SMTP (nodemailer) against a real SMTP server on loopback (smtp-server)', () => {
  let server: SMTPServer;
  let port: number;
  const received: { from: string; to: string[]; raw: string }[] = [];
  /** What the server answers to the next RCPT: a code, or accept. */
  let refuseRecipient: { code: number; message: string } | null = null;

  beforeAll(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo(address, _session, done) {
        if (refuseRecipient) {
          const err = Object.assign(new Error(refuseRecipient.message), { responseCode: refuseRecipient.code });
          return done(err);
        }
        done();
      },
      onData(stream, session, done) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString('utf8') });
          done();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('delivers one message with a text and an HTML part, the envelope naming sender and recipient', async () => {
    const smtp = smtpTransport(`smtp://127.0.0.1:${port}`);
    try {
      const sent = await smtp.send(mail);
      expect(sent.messageId).toMatch(/@/);
      expect(received).toHaveLength(1);
      const [got] = received;
      expect(got!.from).toBe('no-reply@platform.test');
      expect(got!.to).toEqual(['reader@example.com']);
      expect(got!.raw).toMatch(/^Subject: =\?UTF-8\?/m); // the dash is not ASCII: an encoded word
      expect(got!.raw).toContain('Content-Type: multipart/alternative');
      expect(got!.raw).toContain('Content-Type: text/plain; charset=utf-8');
      expect(got!.raw).toContain('Content-Type: text/html; charset=utf-8');
      expect(unQuote(got!.raw)).toContain('https://platform.test/verify-email#token=abc.def');
    } finally {
      await smtp.close();
    }
  });

  it('a 5xx refusal is permanent, a 4xx one is temporary', async () => {
    const smtp = smtpTransport(`smtp://127.0.0.1:${port}`);
    try {
      refuseRecipient = { code: 550, message: 'No such mailbox' };
      const hard = await smtp.send(mail).catch((e: unknown) => e);
      expect(hard).toBeInstanceOf(MailSendError);
      expect((hard as MailSendError).permanent).toBe(true);
      refuseRecipient = { code: 451, message: 'Try again later' };
      const soft = await smtp.send(mail).catch((e: unknown) => e);
      expect(soft).toBeInstanceOf(MailSendError);
      expect((soft as MailSendError).permanent).toBe(false);
    } finally {
      refuseRecipient = null;
      await smtp.close();
    }
  });

  it('no server listening is a temporary failure', async () => {
    const closed = new SMTPServer({ logger: false });
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const smtp = smtpTransport(`smtp://127.0.0.1:${deadPort}`);
    const err = await smtp.send(mail).catch((e: unknown) => e);
    await smtp.close();
    expect(err).toBeInstanceOf(MailSendError);
    expect((err as MailSendError).permanent).toBe(false);
  });
});

/**
 * A loopback stand-in for the SES v2 API (AWS cannot run here): SendEmail is
 * `POST /v2/email/outbound-emails` with a JSON body, signed with SigV4; errors carry their type in
 * the `x-amzn-ErrorType` header, as the real service answers.
 */
describe('Amazon SES (SDK v2 client) against a loopback SES v2 endpoint', () => {
  let server: Server;
  let endpoint: string;
  const requests: { path: string; authorization: string; body: Record<string, unknown> }[] = [];
  let answer: { status: number; type?: string } = { status: 200 };

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        requests.push({ path: `${req.method} ${req.url}`, authorization: String(req.headers.authorization), body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
        if (answer.status !== 200) {
          res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.type ? { 'x-amzn-errortype': answer.type } : {}) });
          res.end(JSON.stringify({ message: 'refused by the fake' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ MessageId: `ses-${requests.length}` }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = { region: 'eu-west-1', maxAttempts: 1, credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' } };
  const ses = () => sesTransport({ configurationSet: 'yumina-production', client: { ...client, endpoint } });

  it('sends a signed SendEmail with the text and HTML bodies and the configuration set', async () => {
    const transport = ses();
    const sent = await transport.send(mail);
    await transport.close();
    expect(sent.messageId).toBe('ses-1');
    const [req] = requests;
    expect(req!.path).toBe('POST /v2/email/outbound-emails');
    expect(req!.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/eu-west-1\/ses\/aws4_request, SignedHeaders=.+, Signature=[0-9a-f]{64}$/);
    expect(req!.body).toEqual({
      FromEmailAddress: mail.from,
      Destination: { ToAddresses: [mail.to] },
      ConfigurationSetName: 'yumina-production',
      Content: {
        Simple: {
          Subject: { Data: mail.subject, Charset: 'UTF-8' },
          Body: { Text: { Data: mail.text, Charset: 'UTF-8' }, Html: { Data: mail.html, Charset: 'UTF-8' } },
        },
      },
    });
  });

  it('MessageRejected is permanent; a throttle or a server error is temporary', async () => {
    const transport = ses();
    try {
      answer = { status: 400, type: 'MessageRejected' };
      const rejected = (await transport.send(mail).catch((e: unknown) => e)) as MailSendError;
      expect(rejected).toBeInstanceOf(MailSendError);
      expect(rejected.message).toMatch(/^SES: MessageRejected/);
      expect(rejected.permanent).toBe(true);
      answer = { status: 429, type: 'TooManyRequestsException' };
      expect(((await transport.send(mail).catch((e: unknown) => e)) as MailSendError).permanent).toBe(false);
      answer = { status: 500, type: 'InternalFailure' };
      expect(((await transport.send(mail).catch((e: unknown) => e)) as MailSendError).permanent).toBe(false);
    } finally {
      answer = { status: 200 };
      await transport.close();
    }
  });
});

describe('the outbox folder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'yumina-outbox-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps each message as a file, lists them newest first, and reads only its own ids', async () => {
    const outbox = outboxTransport(dir);
    const first = await outbox.send(mail);
    const second = await outbox.send({ ...mail, subject: 'Second' });
    const listed = await listOutbox(dir);
    expect(listed.map((m) => m.id)).toEqual([second.messageId, first.messageId]);
    // Sent within one millisecond (as these two often are), they still list newest first.
    const burst = [];
    for (let index = 0; index < 20; index++) burst.push((await outbox.send({ ...mail, subject: `Burst ${index}` })).messageId);
    expect((await listOutbox(dir)).slice(0, 20).map((m) => m.id)).toEqual(burst.reverse());
    expect(listed[0]).toMatchObject({ ...mail, subject: 'Second' });
    expect(await readOutbox(dir, first.messageId)).toMatchObject(mail);
    expect(await readOutbox(dir, '../../etc/passwd')).toBeNull();
    expect(await readOutbox(dir, `${first.messageId}/..`)).toBeNull();
  });
});
