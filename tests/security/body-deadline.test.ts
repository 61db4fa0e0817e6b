import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

/**
 * Issue 43, point 1's body deadline must never crash a replica: a turn whose body came after its
 * headers is read through a stream that fails at the deadline; when the route answered without
 * reading that body (here: a body of a type no route takes, 415), the failure found nobody
 * listening and was thrown in the process (the whole suite once caught it as an uncaught
 * exception). Now the deadline ends with the request or its answer, and its stream's failure is
 * always listened to.
 */
describe('the body deadline of a late body', () => {
  let server: TestServer;
  const uncaught: unknown[] = [];
  const record = (err: unknown) => void uncaught.push(err);

  beforeAll(async () => {
    server = await startTestServer({ ADMISSION_BODY_TIMEOUT_MS: '400', ADMISSION_WARM_UP: '0' });
    process.on('uncaughtException', record);
  });
  afterAll(async () => {
    process.off('uncaughtException', record);
    await server?.stop();
  });

  it('a late body that no route reads ends quietly: no exception in the process, the server answers', async () => {
    const port = Number(new URL(server.url).port);
    const answers = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1');
          let text = '';
          socket.on('data', (d) => (text += d.toString('latin1')));
          socket.on('error', reject);
          socket.on('close', () => resolve(text));
          socket.once('connect', () => {
            socket.write(`POST /api/sessions/cnv_late${i}/messages HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/x-late\r\ncontent-length: 5\r\nconnection: close\r\n\r\n`);
            setTimeout(() => socket.write('hello'), 150);
          });
        }),
      ),
    );
    for (const text of answers) expect(text).toMatch(/^HTTP\/1\.1 4\d\d /);
    // past the deadline: nothing was thrown in the process, and the server still answers
    await new Promise((r) => setTimeout(r, 900));
    expect(uncaught).toEqual([]);
    expect((await fetch(`${server.url}/api/version`)).status).toBe(200);
  });
});
