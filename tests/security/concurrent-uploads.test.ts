import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 43, point 6: identical uploads at the same moment gave a 500 on the local object store (the
 * embedded default's folder): a picture's file is named by its content, and the two writes' temporary
 * files were named by the process and the millisecond, so both wrote one temporary file and the
 * second rename found it gone. Each write now has a temporary file of its own. Fired at once through
 * the real routes: profile pictures, persona avatars and world assets, each upload answered 201.
 */

const AT_ONCE = 12;
const ROUNDS = 3;

describe('identical uploads at the same moment all succeed', () => {
  let server: TestServer;
  let owner: Browser;
  let photo: Buffer;
  beforeAll(async () => {
    server = await startTestServer();
    owner = new Browser(server.url);
    expect((await signUp(server, owner, { email: 'uploader@example.com' })).status).toBe(201);
    photo = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#3070c0' } }).png().toBuffer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** `AT_ONCE` identical uploads started together, `ROUNDS` times: every status, and the bodies of any that were not 201. */
  async function burst(path: string): Promise<{ statuses: number[]; failures: string[] }> {
    const statuses: number[] = [];
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(
        Array.from({ length: AT_ONCE }, () => owner.fetch(path, { method: 'POST', body: photo as Uint8Array<ArrayBuffer>, headers: { 'content-type': 'image/png' } })),
      );
      for (const res of answers) {
        statuses.push(res.status);
        const text = await res.text();
        if (res.status !== 201) failures.push(text);
      }
    }
    return { statuses, failures };
  }

  it('profile pictures: every upload answers 201 and the picture is served', async () => {
    const { statuses, failures } = await burst('/api/account/picture');
    expect(failures).toEqual([]);
    expect(statuses).toEqual(Array(AT_ONCE * ROUNDS).fill(201));
    const { account } = (await (await owner.fetch('/api/account')).json()) as { account: { picture: string } };
    const served = await fetch(`${server.url}${account.picture}`);
    expect(served.status).toBe(200);
    expect((await sharp(Buffer.from(await served.arrayBuffer())).metadata()).format).toBe('webp');
  });

  it('persona avatars: every upload answers 201', async () => {
    const created = await owner.fetch('/api/personas', { method: 'POST', json: { name: 'Twin' } });
    expect(created.status).toBe(201);
    const persona = (await created.json()) as { id: string };
    const { statuses, failures } = await burst(`/api/personas/${persona.id}/avatar`);
    expect(failures).toEqual([]);
    expect(statuses).toEqual(Array(AT_ONCE * ROUNDS).fill(201));
  });

  it('world assets: every upload answers 201 and each is stored', async () => {
    const made = await owner.fetch('/api/worlds', { method: 'POST', json: { world: { version: '20.0.0', name: 'Twin assets', description: 'Uploaded twice at once.' } } });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: string };
    const { statuses, failures } = await burst(`/api/worlds/${id}/assets?name=twin.png`);
    expect(failures).toEqual([]);
    expect(statuses).toEqual(Array(AT_ONCE * ROUNDS).fill(201));
    const { assets } = (await (await owner.fetch(`/api/worlds/${id}/assets`)).json()) as { assets: unknown[] };
    expect(assets).toHaveLength(AT_ONCE * ROUNDS);
  });
});
