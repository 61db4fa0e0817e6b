import { listOutbox, type OutboxMail, readOutbox } from '@yumina/mail';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Plain text with its links made clickable (they are the platform's own links: verification, reset). */
const linkify = (text: string) =>
  escape(text).replace(/https?:\/\/[^\s<>"']+/g, (url) => `<a href="${url}">${url}</a>`);

const STYLE = `body{font-family:system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a;line-height:1.5}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid #ddd;vertical-align:top}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:1rem;border-radius:6px}
iframe{width:100%;height:28rem;border:1px solid #ddd;border-radius:6px}a{color:#1f4fbf}.hint{color:#555}`;

function page(reply: FastifyReply, title: string, body: string) {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    // The page itself runs no script; a message's HTML is shown in a sandboxed frame of its own.
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; frame-ancestors 'none'")
    .header('referrer-policy', 'no-referrer')
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escape(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`);
}

function row(m: OutboxMail) {
  return `<tr><td>${escape(new Date(m.date).toLocaleString('en-GB', { timeZone: 'UTC' }))} UTC</td><td>${escape(m.to)}</td><td><a href="/dev/outbox/${m.id}">${escape(m.subject)}</a></td></tr>`;
}

/**
 * Whether the socket's peer is this machine (127.0.0.0/8, ::1, or either mapped into IPv6). The
 * socket's own address only: X-Forwarded-For and the trusted-proxy settings never count here, since
 * a proxy on this machine would make every client look local.
 */
export function isLoopbackPeer(remoteAddress: string | undefined): boolean {
  if (!remoteAddress) return false;
  const address = remoteAddress.toLowerCase().replace(/^::ffff:/, '');
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);
}

/** The outbox holds every account's links (verification, reset): only a peer on this machine reads it. */
async function onlyFromThisMachine(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (isLoopbackPeer(request.raw.socket.remoteAddress)) return;
  await reply
    .code(403)
    .header('cache-control', 'no-store')
    .send({ error: { code: 'FORBIDDEN', message: 'The outbox is readable only from the machine the server runs on.' } });
}

/**
 * The local outbox (the embedded default's mail transport): /dev/outbox lists the messages,
 * /dev/outbox/:id shows one (its text with clickable links, and its HTML in a sandboxed frame).
 * Registered only when mail goes to the outbox and the server is not in production mode, where
 * /dev/… answers 404 (../web.ts). Both answer only a loopback peer (onlyFromThisMachine).
 */
export async function outboxPage(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const dir = ctx.config.mail.outboxDir;
  app.get('/dev/outbox', { onRequest: onlyFromThisMachine }, async (_request, reply) => {
    const mails = await listOutbox(dir);
    const list = mails.length
      ? `<table><caption class="hint">Newest first; nothing here left this machine.</caption><thead><tr><th scope="col">Sent</th><th scope="col">To</th><th scope="col">Subject</th></tr></thead><tbody>${mails.map(row).join('')}</tbody></table>`
      : '<p data-testid="outbox-empty">No mail yet. Sign up, ask for a password reset or change your e-mail address, and the message appears here.</p>';
    return page(reply, 'Outbox', `<h1>Outbox</h1><p class="hint">Mail the platform sent from ${escape(dir)}. Set SMTP_URL to send real mail.</p>${list}`);
  });
  app.get<{ Params: { id: string } }>('/dev/outbox/:id', { onRequest: onlyFromThisMachine }, async (request, reply) => {
    const mail = await readOutbox(dir, request.params.id.replace(/\.html$/, ''));
    if (!mail) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'No such message in the outbox.' } });
    if (request.params.id.endsWith('.html')) {
      // The message's own HTML, sandboxed: no script runs, links open outside the frame.
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', "sandbox allow-popups allow-popups-to-escape-sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:")
        .send(mail.html.replace(/<head>/i, '<head><base target="_blank">'));
    }
    return page(
      reply,
      mail.subject,
      `<p><a href="/dev/outbox">← Outbox</a></p><h1>${escape(mail.subject)}</h1>
<dl><dt>From</dt><dd>${escape(mail.from)}</dd><dt>To</dt><dd>${escape(mail.to)}</dd><dt>Sent</dt><dd>${escape(mail.date)}</dd></dl>
<h2>Text</h2><pre data-testid="mail-text">${linkify(mail.text)}</pre>
<h2>HTML</h2><iframe title="The message as HTML" sandbox="allow-popups allow-popups-to-escape-sandbox" src="/dev/outbox/${mail.id}.html"></iframe>`,
    );
  });
}
