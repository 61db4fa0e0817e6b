import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxOf, waitForMail } from '../support/outbox.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 43, point 10: display names took CR/LF and other control characters, which then went into
 * mail, other players' screens, partners' tokens and logs (a name forged a line of its own). A name
 * is now one line of visible text: line breaks and tabs become spaces, other control characters
 * (C0, DEL, C1, bidirectional overrides and isolates) are removed. At sign-up, in the profile, for
 * personas, and for the names stored before (migration 101). Through the real server.
 */

interface ErrorBody {
  error: { code: string; message: string };
}
interface AccountBody {
  account: { displayName: string };
}

/** Every character a display name must not keep. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('display names are one line of visible text', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const account = async (b: Browser) => ((await (await b.fetch('/api/account')).json()) as AccountBody).account;

  it('a sign-up name with CR/LF, a tab, a bell, C1 and a right-to-left override keeps only its visible text', async () => {
    const b = new Browser(server.url);
    const email = 'newline-name@example.com';
    const done = await signUp(server, b, { email, displayName: 'Eve\r\nBcc: boss@example.com\t\u0007\u0085\u009b\u202emid\u2028night  ' });
    expect(done.status).toBe(201);
    const name = (await account(b)).displayName;
    expect(name).toBe('Eve Bcc: boss@example.com mid night');
    expect(name).not.toMatch(CONTROL);
    // The sign-up mail greets the same cleaned name.
    const mail = await waitForMail(outboxOf(server), email);
    expect(mail.text).toContain('Eve Bcc: boss@example.com mid night');
    expect(mail.text).not.toMatch(/Eve\s*\r?\nBcc/);
    // Partners' tokens carry it too.
    const token = (await (await b.fetch('/api/partners/demo/token', { method: 'POST' })).json()) as { token: string };
    const claims = JSON.parse(Buffer.from(token.token.split('.')[1]!, 'base64url').toString()) as { display_name: string };
    expect(claims.display_name).toBe('Eve Bcc: boss@example.com mid night');
  });

  it('the profile cleans a new name the same way; a name of control characters only is refused', async () => {
    const b = new Browser(server.url);
    await signUp(server, b, { displayName: 'Plain' });
    const changed = await b.fetch('/api/account/profile', { method: 'PATCH', json: { displayName: 'Line one\nLine two\u000b\u001b[31m' } });
    expect(changed.status).toBe(200);
    expect((await account(b)).displayName).toBe('Line one Line two [31m');

    const empty = await b.fetch('/api/account/profile', { method: 'PATCH', json: { displayName: '\r\n\t\u0007\u202e' } });
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as ErrorBody).error).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringContaining('displayName') });
    expect((await account(b)).displayName).toBe('Line one Line two [31m');
    // Emoji joined by U+200D and other visible text stay as they are.
    expect((await b.fetch('/api/account/profile', { method: 'PATCH', json: { displayName: 'Ana 👩‍🚀 Müller' } })).status).toBe(200);
    expect((await account(b)).displayName).toBe('Ana 👩‍🚀 Müller');
  });

  it('a persona name is cleaned the same way', async () => {
    const b = new Browser(server.url);
    await signUp(server, b);
    const created = await b.fetch('/api/personas', { method: 'POST', json: { name: 'Mask\r\nSYSTEM: obey' } });
    expect(created.status).toBe(201);
    expect(((await created.json()) as { name: string }).name).toBe('Mask SYSTEM: obey');
  });

  it('migration 101 cleans the names stored before', async () => {
    const b = new Browser(server.url);
    await signUp(server, b, { displayName: 'Stored' });
    const db = server.ctx.db.primary;
    await db.query(`update accounts set display_name = E'Old\\r\\nname\\u0007\\u202e' where display_name = 'Stored'`);
    await db.query(`update accounts set display_name = E'\\r\\n\\u0001' where id = (select id from accounts where display_name <> 'Player' order by created_at limit 1)`);
    const sql = readFileSync(new URL('../../migrations/101_one_line_display_names.sql', import.meta.url), 'utf8');
    await db.transaction((tx) => tx.query(sql));
    expect((await account(b)).displayName).toBe('Old name');
    const { rows } = await db.query<{ display_name: string }>('select display_name from accounts');
    for (const row of rows) expect(row.display_name).not.toMatch(CONTROL);
    expect(rows.map((row) => row.display_name)).toContain('Player');
  });
});
