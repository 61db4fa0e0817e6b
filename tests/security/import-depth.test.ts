import { encodeBase64Utf8, pngWithText } from '@yumina/world';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 43, point 5: a character card nested 10,000 levels deep (about 20 KB) gave a 500 from the
 * import route (a stack overflow in the importer's text cleaning). Each walk over an imported file
 * now runs only on a file whose nesting was measured first, without recursion: deeper than 64
 * levels answers 400 with the path where it goes too deep, and nothing is created. Through the real
 * import route, in each form a file arrives: the file itself, a multipart form, base64 in JSON, a PNG.
 */

interface ErrorBody {
  error: { code: string; message: string };
}

/** A V2 card whose extensions hold `depth` nested arrays (about 2 bytes a level). */
function deepCard(depth: number): string {
  const head = JSON.stringify({ spec: 'chara_card_v2', spec_version: '2.0', data: { name: 'Abyss', description: 'deep', first_mes: 'Hello.', extensions: { nest: '@' } } });
  return head.replace('"@"', `${'['.repeat(depth)}${']'.repeat(depth)}`);
}
/** The path the refusal names for deepCard: the 64th level is data.extensions.nest[0]…[0], the 65th one [0] further. */
const deepPath = `data.extensions.nest${'[0]'.repeat(61)}`;

describe('a deeply nested card is refused with its path (400), never a 500', () => {
  let server: TestServer;
  let author: Browser;
  beforeAll(async () => {
    server = await startTestServer({ IMPORT_RATE_LIMIT_PER_MINUTE: '100' });
    author = new Browser(server.url);
    expect((await signUp(server, author, { email: 'deep-author@example.com' })).status).toBe(201);
  });
  afterAll(async () => {
    await server?.stop();
  });

  const worldCount = async () => Number((await server.ctx.db.primary.query<{ n: string }>('select count(*) as n from worlds')).rows[0]!.n);

  async function expectTooDeep(res: Response): Promise<void> {
    const body = (await res.json()) as ErrorBody;
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(400);
    expect(body.error.code).toBe('IMPORT_TOO_DEEP');
    expect(body.error.message).toContain('64 levels');
    expect(body.error.message).toContain(deepPath);
  }

  it('depth 10,000 in about 20 KB: as the file itself, a multipart form, base64 in JSON and a PNG card', async () => {
    const card = deepCard(10_000);
    expect(card.length).toBeLessThan(21_000);
    const before = await worldCount();

    await expectTooDeep(await author.fetch('/api/worlds/import?name=abyss.json', { method: 'POST', body: card, headers: { 'content-type': 'application/octet-stream' } }));

    const form = new FormData();
    form.append('file', new Blob([card], { type: 'application/json' }), 'abyss.json');
    await expectTooDeep(await author.fetch('/api/worlds/import', { method: 'POST', body: form }));

    await expectTooDeep(await author.fetch('/api/worlds/import', { method: 'POST', json: { file: { name: 'abyss.json', base64: Buffer.from(card).toString('base64') } } }));

    const png = pngWithText({ chara: encodeBase64Utf8(card) });
    await expectTooDeep(await author.fetch('/api/worlds/import', { method: 'POST', body: png as Uint8Array<ArrayBuffer>, headers: { 'content-type': 'image/png' } }));

    expect(await worldCount()).toBe(before);
    // The server goes on answering.
    expect((await author.fetch('/api/auth/session')).status).toBe(200);
  });

  it('just past the bound is refused; just within it imports', async () => {
    await expectTooDeep(await author.fetch('/api/worlds/import', { method: 'POST', body: deepCard(62), headers: { 'content-type': 'application/octet-stream' } }));
    const within = await author.fetch('/api/worlds/import', { method: 'POST', body: deepCard(61), headers: { 'content-type': 'application/octet-stream' } });
    expect(within.status).toBe(201);
  });
});
