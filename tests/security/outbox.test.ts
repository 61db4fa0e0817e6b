import { request as httpRequest } from 'node:http';
import { networkInterfaces } from 'node:os';
import { loadConfig } from '@yumina/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxOf, waitForMail } from '../support/outbox.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';

/**
 * Issue 43, point 2: the local outbox (the embedded default's mail transport) holds every account's
 * links. An anonymous client that reached the port asked for a reset of another account, read the
 * link at /dev/outbox and took the account. The embedded default now listens on loopback unless HOST
 * says otherwise, and /dev/outbox answers only a loopback peer: the socket's address, whatever a
 * forwarded header claims, even from a hop that TRUST_PROXY trusts.
 *
 * The non-loopback peer is real: the server listens on every interface and the test connects to
 * this machine's own non-loopback address, so the socket's peer is that address, not 127.0.0.1.
 */

/** This machine's first non-loopback IPv4 address (a test machine has one: its network interface). */
function externalAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const info of list ?? []) if (info.family === 'IPv4' && !info.internal) return info.address;
  }
  throw new Error('this machine has no non-loopback IPv4 address to reach the server from');
}

/** A GET to `host:port` with the given headers: the status and body (node:http, so Host is ours). */
function get(host: string, port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, path, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the embedded default listens on loopback', () => {
  it('without HOST, local mode binds 127.0.0.1 and container mode every interface', () => {
    expect(loadConfig({}).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '' }).host).toBe('127.0.0.1');
    expect(loadConfig({ HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('a server started without HOST cannot be reached on the machine\'s other address', async () => {
    const server = await startTestServer({ HOST: '' });
    try {
      const port = Number(new URL(server.url).port);
      expect((await get('127.0.0.1', port, '/health/live')).status).toBe(200);
      await expect(get(externalAddress(), port, '/health/live')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await server.stop();
    }
  });
});

describe('/dev/outbox answers only a loopback peer', () => {
  let server: TestServer;
  let port: number;
  const outside = externalAddress();
  beforeAll(async () => {
    // Every interface, and the machine's own address trusted as a proxy hop: its X-Forwarded-For
    // would name the client everywhere else, but never opens the outbox.
    server = await startTestServer({ HOST: '0.0.0.0', TRUST_PROXY: outside });
    port = Number(new URL(server.url).port);
    const b = new Browser(server.url);
    const res = await b.fetch('/api/auth/signup', { method: 'POST', json: { email: 'outbox-victim@example.com', password: 'long enough pw', displayName: 'Victim' } });
    expect(res.status).toBe(202);
    await waitForMail(outboxOf(server), 'outbox-victim@example.com');
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('from this machine the outbox lists the mail', async () => {
    const res = await get('127.0.0.1', port, '/dev/outbox');
    expect(res.status).toBe(200);
    expect(res.body).toContain('outbox-victim@example.com');
  });

  it('from another address the list and each message are refused, with or without a forwarded loopback address', async () => {
    const mail = await waitForMail(outboxOf(server), 'outbox-victim@example.com');
    for (const path of ['/dev/outbox', `/dev/outbox/${mail.id}`, `/dev/outbox/${mail.id}.html`]) {
      const forged: Record<string, string>[] = [{}, { 'x-forwarded-for': '127.0.0.1' }, { 'x-forwarded-for': '::1', host: 'localhost' }];
      for (const headers of forged) {
        const res = await get(outside, port, path, headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(403);
        expect(JSON.parse(res.body)).toEqual({ error: { code: 'FORBIDDEN', message: expect.any(String) } });
        expect(res.body).not.toContain('outbox-victim');
        expect(res.body).not.toContain('token=');
      }
    }
  });
});
