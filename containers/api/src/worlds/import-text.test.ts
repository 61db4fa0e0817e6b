/**
 * Issue 31 point 5: imported text passes the same text guard as every JSON body. Seen in the
 * wild: U+0000 in a card's name gave a 500; U+0000 in a greeting was stored and every new session
 * of that world then gave a 500; a lone surrogate was stored and the author could no longer save
 * the world. A file's text is cleaned (U+0000 removed, a lone surrogate → U+FFFD) with a report
 * line naming the path; the same text in a JSON request body is refused with its path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';

/** A V2 card's JSON text with the unsafe characters written as JSON escapes (as such files carry them). */
const dirtyCard = () =>
  JSON.stringify({
    spec: 'chara_card_v2',
    spec_version: '2.0',
    data: { name: 'Null\u0000Knight', description: 'A knight of {{user}}.', first_mes: 'Halt!\u0000 Who goes there?', personality: 'stern \ud800 and \udfff proud', scenario: '', mes_example: '' },
  });

describe('imported text and the text guard (real PostgreSQL)', () => {
  let server: TestServer;
  let author: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    await signUp(server, author, { email: `text-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Text' });
  });
  afterAll(() => server?.stop());

  it('a card file with U+0000 and lone surrogates is cleaned and reported; the world plays and saves', async () => {
    const res = await author.fetch('/api/worlds/import?name=knight.json', { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: dirtyCard() });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; revision: number; world: Record<string, unknown> & { name: string; entries: { id: string; content: string }[] }; report: { changes: { kind: string; path: string; message: string }[] } };
    expect(body.world.name).toBe('NullKnight');
    expect(body.world.entries.find((entry) => entry.id === 'greeting')?.content).toBe('Halt! Who goes there?');
    expect(body.world.entries.find((entry) => entry.id === 'personality')?.content).toBe("NullKnight's personality: stern \uFFFD and \uFFFD proud");
    expect(body.report.changes.filter((change) => change.kind === 'converted').map((change) => `${change.path}: ${change.message}`)).toEqual([
      'data.name: 1 U+0000 character removed (text that cannot be stored)',
      'data.first_mes: 1 U+0000 character removed (text that cannot be stored)',
      'data.personality: 2 unpaired surrogates replaced by U+FFFD (text that cannot be stored)',
    ]);
    // A new session starts (the greeting opens it) ...
    const session = await author.fetch(`/api/worlds/${body.id}/sessions`, { method: 'POST', json: {} });
    expect(session.status).toBe(201);
    expect(JSON.stringify(await session.json())).toContain('Halt! Who goes there?');
    // ... and the author can save the world as it came back.
    const saved = await author.fetch(`/api/worlds/${body.id}`, { method: 'PUT', json: { world: body.world, revision: body.revision } });
    expect(saved.status).toBe(200);
  });

  it('the same text in a JSON request body is refused with its path (400, as every JSON body), and nothing is created', async () => {
    const count = async () => (await server.ctx.db.primary.query<{ n: number }>('select count(*)::int as n from worlds')).rows[0]!.n;
    const before = await count();
    const res = await author.fetch('/api/worlds/import', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"world": ${dirtyCard()}}` });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: 'INVALID_TEXT', message: 'Invalid request body: world.data.name: must not contain U+0000 or unpaired surrogate characters' } });
    expect(await count()).toBe(before);
  });
});
