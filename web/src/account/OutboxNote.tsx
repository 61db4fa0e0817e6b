import { useEffect, useState } from 'react';
import { api } from '../lib/api.ts';

interface MailOutbox {
  /** The outbox page this viewer can open, or null when it is not served (production mode). */
  page: string | null;
}

let asked: Promise<MailOutbox | null> | null = null;

/** Whether this server keeps its mail in the local outbox (GET /api/platform), asked once per page load. */
function mailOutbox(): Promise<MailOutbox | null> {
  asked ??= api<{ mailOutbox?: MailOutbox | null }>('/api/platform').then(
    (r) => r.mailOutbox ?? null,
    () => {
      asked = null;
      return null;
    },
  );
  return asked;
}

/**
 * On a server whose mail stays on the machine (the local outbox, `npm start`'s default), the pages
 * that send a mail (sign-up, password reset, address change) say where it went instead of leaving
 * the reader to wait for an inbox that never receives it; with a link when the outbox page is served.
 */
export function OutboxNote() {
  const [outbox, setOutbox] = useState<MailOutbox | null>(null);
  useEffect(() => {
    let live = true;
    void mailOutbox().then((o) => live && setOutbox(o));
    return () => {
      live = false;
    };
  }, []);
  if (!outbox) return null;
  return (
    <p className="callout" data-testid="outbox-note">
      This server does not send real mail: it keeps every message in its local outbox.{' '}
      {outbox.page ? (
        <>
          Open <a href={outbox.page} target="_blank" rel="noreferrer">{outbox.page}</a> to read this one and follow its link.
        </>
      ) : (
        <>Whoever runs the server finds it in the outbox folder (MAIL_OUTBOX_DIR), or sets SMTP_URL to send mail.</>
      )}
    </p>
  );
}
