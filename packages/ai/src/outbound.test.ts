import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectStream, completeChat, streamChat } from './chat.ts';
import { AiProviderError } from './errors.ts';
import { AiUrlRefusedError, guardedFetch, isPrivateAddress, normalizeBaseUrl, readBounded } from './outbound.ts';

describe('the private-address rule', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['0.0.0.0', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['192.168.0.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['100.127.255.255', true],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fc00::1', true],
    ['fd12:3456::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['0:0:0:0:0:ffff:a9fe:a9fe', true],
    ['::ffff:10.0.0.1', true],
    ['::7f00:1', true],
    ['8.8.8.8', false],
    ['172.32.0.1', false],
    ['100.128.0.1', false],
    ['2606:4700::1111', false],
    ['::ffff:8.8.8.8', false],
  ])('%s → %s', (address, refused) => {
    expect(isPrivateAddress(address)).toBe(refused);
  });

  // Issue 28, item 6: IPv4 inside IPv6 transition forms is judged as IPv4, and the special-use
  // ranges of IANA's registries (not globally reachable) are refused.
  it.each([
    // IPv4-translated (::ffff:0:a.b.c.d), in both spellings
    ['::ffff:0:7f00:1', true],
    ['::ffff:0:127.0.0.1', true],
    ['::ffff:0:a9fe:a9fe', true],
    ['::ffff:0:808:808', false],
    // NAT64: the well-known prefix 64:ff9b::/96 carries the IPv4 address; the local-use 64:ff9b:1::/48 is never global
    ['64:ff9b::7f00:1', true],
    ['64:ff9b::127.0.0.1', true],
    ['64:ff9b::a00:1', true],
    ['64:ff9b::c000:201', true],
    ['64:ff9b::808:808', false],
    ['64:ff9b:1::808:808', true],
    ['64:ff9b:1:7f00:1::', true],
    // 6to4: 2002:AABB:CCDD::/48 is the IPv4 address AA.BB.CC.DD
    ['2002:7f00:1::', true],
    ['2002:a9fe:a9fe::1', true],
    ['2002:c0a8:101::1', true],
    ['2002:808:808::1', false],
    // Teredo 2001:0::/32: server IPv4, then the client's IPv4 inverted in the last 32 bits
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', true], // client 127.0.0.1
    ['2001:0:a00:1:8000:63bf:f7f7:f7f7', true], // server 10.0.0.1
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', false], // server 65.54.227.120, client 8.8.8.8
    // special-use IPv4
    ['192.0.0.1', true],
    ['192.0.0.170', true],
    ['192.0.2.1', true],
    ['192.88.99.1', true],
    ['198.18.0.1', true],
    ['198.19.255.255', true],
    ['198.51.100.7', true],
    ['203.0.113.9', true],
    ['224.0.0.1', true],
    ['239.255.255.250', true],
    ['240.0.0.1', true],
    ['255.255.255.254', true],
    ['255.255.255.255', true],
    ['::ffff:192.0.2.1', true],
    ['::ffff:198.18.0.1', true],
    ['192.0.1.255', false],
    ['192.0.3.0', false],
    ['198.17.255.255', false],
    ['198.20.0.0', false],
    ['203.0.114.1', false],
    ['223.255.255.255', false],
    ['192.31.196.1', false], // AS112: globally reachable
    // special-use IPv6
    ['2001:db8::1', true],
    ['2001:db8:ffff::1', true],
    ['3fff::1', true],
    ['100::1', true],
    ['100::ffff:ffff:ffff:ffff', true],
    ['2001:2::1', true],
    ['2001:10::1', true],
    ['ff02::1', true],
    ['ff0e::1', true],
    ['fec0::1', true],
    ['5f00::1', true],
    ['1::1', true],
    ['4000::1', true],
    ['2a00:1450:4001::200e', false],
    ['2001:4860:4860::8888', false],
  ])('special-use and transition form %s → %s', (address, refused) => {
    expect(isPrivateAddress(address)).toBe(refused);
  });

  it('refuses transition forms and special-use addresses in a base URL', () => {
    for (const url of [
      'http://[::ffff:0:7f00:1]/v1',
      'http://[64:ff9b::7f00:1]/v1',
      'http://[2002:7f00:1::]/v1',
      'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/v1',
      'http://[2001:db8::1]/v1',
      'http://[100::1]/v1',
      'http://192.0.2.10/v1',
      'http://198.18.0.1/v1',
      'http://203.0.113.1/v1',
      'http://255.255.255.255/v1',
      'http://0xffffffff/v1',
    ]) {
      expect(() => normalizeBaseUrl(url), url).toThrow(/private network/);
    }
    expect(normalizeBaseUrl('http://[64:ff9b::808:808]/v1')).toBe('http://[64:ff9b::808:808]/v1');
  });

  it('normalizes what it accepts and refuses what it must, naming why', () => {
    expect(normalizeBaseUrl(' https://api.openai.com/v1/ ')).toBe('https://api.openai.com/v1');
    expect(normalizeBaseUrl('http://localhost:11434/v1', 'allow')).toBe('http://localhost:11434/v1');
    for (const [url, why] of [
      ['http://0x7f000001:80/', /private network/],
      ['http://2130706433/', /private network/],
      ['http://017700000001/', /private network/],
      ['http://127.1/', /private network/],
      ['http://localhost/v1', /private network/],
      ['http://[::ffff:169.254.169.254]/', /private network/],
      ['ftp://example.com/', /http/],
      ['https://u:p@example.com/v1', /user name/],
      ['https://example.com/v1#', /fragment/],
      ['https://example.com/v1?', /query/],
      ['not a url', /valid/],
    ] as const) {
      expect(() => normalizeBaseUrl(url)).toThrow(why);
    }
  });
});

describe('guarded requests (loopback servers)', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.url === '/redirect/chat/completions') {
        res.writeHead(307, { location: '/target' }).end();
      } else if (req.url === '/huge-error/chat/completions') {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'x'.repeat(100_000) } }));
      } else if (req.url === '/flood/chat/completions') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < 100; i++) res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'é'.repeat(1000) } }] })}\n\n`);
        res.end('data: [DONE]\n\n');
      } else if (req.url === '/nul/chat/completions') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ choices: [{ message: { content: 'a\u0000b\ud800c' }, finish_reason: 'stop' }] }));
      } else {
        res.writeHead(200).end('ok');
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const request = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };

  it('deny refuses a loopback literal before anything is sent; allow reaches it', async () => {
    const before = seen.length;
    const signal = new AbortController().signal;
    await expect(guardedFetch(`${base}/x`, { method: 'GET', headers: {}, signal, privateNetwork: 'deny' })).rejects.toBeInstanceOf(AiUrlRefusedError);
    expect(seen.length).toBe(before);
    const res = await guardedFetch(`${base}/x`, { method: 'GET', headers: {}, signal, privateNetwork: 'allow' });
    expect((await readBounded(res, 10)).text).toBe('ok');
  });

  it('a redirect is a provider error and is not followed', async () => {
    const err = await completeChat({ baseUrl: `${base}/redirect`, apiKey: 'k', privateNetwork: 'allow' }, request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AiProviderError);
    expect((err as AiProviderError).status).toBe(307);
    expect(seen).not.toContain('/target');
  });

  it('error bodies are read up to 4 KB', async () => {
    const err = (await completeChat({ baseUrl: `${base}/huge-error`, apiKey: 'k', privateNetwork: 'allow' }, request).catch((e: unknown) => e)) as AiProviderError;
    expect(err.bodyText.length).toBeLessThanOrEqual(4096);
  });

  it('a stream is cut at the reply cap (UTF-8 bytes, never mid-character) and marked truncated', async () => {
    const result = await collectStream(streamChat({ baseUrl: `${base}/flood`, apiKey: null, privateNetwork: 'allow' }, request, { maxReplyBytes: 5_001 }));
    expect(result.truncated).toBe(true);
    expect(Buffer.byteLength(result.content)).toBe(5_000); // 'é' is 2 bytes: the odd byte is left out
    expect(result.content).toBe('é'.repeat(2_500));
  });

  it('provider text loses U+0000 and unpaired surrogates', async () => {
    const result = await completeChat({ baseUrl: `${base}/nul`, apiKey: null, privateNetwork: 'allow' }, request);
    expect(result.content).toBe('ab\ufffdc');
  });
});

describe('the keep-alive pool', () => {
  let server: Server;
  let port = 0;
  const connections: string[] = [];
  const hosts: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      hosts.push(req.headers.host ?? '');
      if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(256 * 1024));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
    server.on('connection', (socket) => connections.push(`${socket.remoteAddress}:${socket.remotePort}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const get = (url: string) => guardedFetch(url, { method: 'GET', headers: {}, signal: new AbortController().signal, privateNetwork: 'allow' });

  it('reuses a connection to the same checked address, keeps the host name in the Host header, and never pools a body cut short', async () => {
    connections.length = 0;
    hosts.length = 0;
    expect((await readBounded(await get(`http://127.0.0.1:${port}/a`), 100)).text).toBe('ok');
    expect((await readBounded(await get(`http://127.0.0.1:${port}/b`), 100)).text).toBe('ok');
    // a name resolving to the same address shares its pool; the Host header is still the name
    expect((await readBounded(await get(`http://localhost:${port}/c`), 100)).text).toBe('ok');
    expect(hosts).toEqual([`127.0.0.1:${port}`, `127.0.0.1:${port}`, `localhost:${port}`]);
    expect(connections).toHaveLength(1);
    // a bounded read cut short destroys its socket: the next call opens a new connection
    const cut = await readBounded(await get(`http://127.0.0.1:${port}/big`), 10);
    expect(cut.truncated).toBe(true);
    expect((await readBounded(await get(`http://127.0.0.1:${port}/d`), 100)).text).toBe('ok');
    expect(connections).toHaveLength(2);
  });

  it('deny still refuses a name that resolves to a pooled private address', async () => {
    await expect(guardedFetch(`http://localhost:${port}/e`, { method: 'GET', headers: {}, signal: new AbortController().signal, privateNetwork: 'deny' })).rejects.toBeInstanceOf(AiUrlRefusedError);
  });
});
