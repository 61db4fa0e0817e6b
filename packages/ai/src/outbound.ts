import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { BlockList, isIP } from 'node:net';
import { Readable } from 'node:stream';

/**
 * The one guarded HTTP client for every request to an AI provider (a private connection's base
 * URL, the official provider, summaries, model listing, `ai.complete`). Nothing else in the
 * platform sends a request to a URL a user chose.
 *
 * - http and https only, no user-info in the URL;
 * - the host is resolved once, every address it resolves to is checked, and the socket connects to
 *   the checked address (the resolver is `lookup` of the connection itself, so there is no second
 *   lookup a DNS rebind could answer differently); IP literals are checked before connecting;
 * - with `deny`, every special-use address that is not globally reachable is refused: loopback,
 *   unspecified, RFC 1918, link-local, CGNAT, unique-local, documentation, benchmarking, IETF
 *   protocol assignments, multicast, reserved (IANA's special-purpose registries, below); an IPv6
 *   transition form (IPv4-mapped, -translated, -compatible, NAT64, 6to4, Teredo) is judged by the
 *   IPv4 address inside it (numeric spellings such as `0x7f000001` are normalized by the URL
 *   parser first, so they are refused as what they are);
 * - redirects are never followed (node's http client does not follow them; a 3xx is the caller's
 *   provider error);
 * - connections are kept alive and reused, pooled per checked address: the host is resolved and
 *   checked first, and the request is made to that address (the Host header and, for https, the
 *   TLS server name and certificate check keep the host name), so a pooled socket is always one
 *   that was opened to an address the guard allowed. A body that is not read to its end (a bounded
 *   read cut short, an abort) destroys its socket instead of returning it to the pool.
 */

export type PrivateNetworkAccess = 'allow' | 'deny';

/** A request the guard refused before anything was sent. */
export class AiUrlRefusedError extends Error {
  readonly code = 'AI_URL_REFUSED';
  readonly statusCode = 400;
  constructor(message: string) {
    super(message);
    this.name = 'AiUrlRefusedError';
  }
}

/**
 * IPv4 addresses `deny` refuses: every block of IANA's IPv4 Special-Purpose Address Registry that
 * is not globally reachable, plus multicast. (AS112 192.31.196.0/24, AMT 192.52.193.0/24 and
 * 192.175.48.0/24 are special-purpose but globally reachable, so they stay allowed.)
 */
const REFUSED_IPV4 = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 included
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT shared address space
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, the cloud metadata address
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments (DS-Lite, NAT64 discovery …)
  ['192.0.2.0', 24], // documentation TEST-NET-1
  ['192.88.99.0', 24], // deprecated 6to4 relay anycast
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation TEST-NET-2
  ['203.0.113.0', 24], // documentation TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, 255.255.255.255 (limited broadcast) included
] as const) {
  REFUSED_IPV4.addSubnet(net, bits, 'ipv4');
}

/**
 * IPv6 addresses `deny` refuses, judged after the IPv4 inside a transition form has been taken
 * out (below): anything outside global unicast 2000::/3 (::, ::1, the discard prefix 100::/64,
 * the local-use NAT64 prefix 64:ff9b:1::/48, unique-local fc00::/7, link-local fe80::/10,
 * site-local fec0::/10, multicast ff00::/8, SRv6 5f00::/16, the unassigned rest), and inside it
 * the IETF protocol assignments 2001::/23 (benchmarking 2001:2::/48, ORCHID …; Teredo is judged by
 * its IPv4 addresses instead), documentation 2001:db8::/32 and 3fff::/20.
 */
const GLOBAL_UNICAST_IPV6 = new BlockList();
GLOBAL_UNICAST_IPV6.addSubnet('2000::', 3, 'ipv6');
const REFUSED_IPV6 = new BlockList();
for (const [net, bits] of [
  ['2001::', 23],
  ['2001:db8::', 32],
  ['3fff::', 20],
] as const) {
  REFUSED_IPV6.addSubnet(net, bits, 'ipv6');
}

/** The eight 16-bit groups of an IPv6 address (an embedded dotted IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const [a, b, c, d] = tail[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -tail[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const fill = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}

const ipv4Of = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;

/**
 * The IPv4 addresses an IPv6 address stands for, or null when it is not a transition form:
 * IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d (:: and
 * ::1 included, as 0.0.0.0 and 0.0.0.1), NAT64 64:ff9b::a.b.c.d (the well-known /96), 6to4
 * 2002:AABB:CCDD::/48, and Teredo 2001:0::/32 (its server, and its client inverted in the last 32 bits).
 */
function embeddedIpv4(g: readonly number[]): string[] | null {
  const zero = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && (g[5] === 0xffff || g[5] === 0)) return [ipv4Of(g[6]!, g[7]!)];
  if (zero(0, 4) && g[4] === 0xffff && g[5] === 0) return [ipv4Of(g[6]!, g[7]!)];
  if (g[0] === 0x64 && g[1] === 0xff9b && zero(2, 6)) return [ipv4Of(g[6]!, g[7]!)];
  if (g[0] === 0x2002) return [ipv4Of(g[1]!, g[2]!)];
  if (g[0] === 0x2001 && g[1] === 0) return [ipv4Of(g[2]!, g[3]!), ipv4Of(~g[6]! & 0xffff, ~g[7]! & 0xffff)];
  return null;
}

/** True for the addresses `deny` refuses. `address` is a literal IPv4 or IPv6 address (no brackets). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return REFUSED_IPV4.check(address, 'ipv4');
  if (family === 6) {
    const groups = ipv6Groups(address);
    if (groups.length !== 8 || groups.some((x) => !(x >= 0 && x <= 0xffff))) return true;
    const v4 = embeddedIpv4(groups);
    if (v4) return v4.some((a) => REFUSED_IPV4.check(a, 'ipv4'));
    const plain = groups.map((x) => x.toString(16)).join(':');
    return !GLOBAL_UNICAST_IPV6.check(plain, 'ipv6') || REFUSED_IPV6.check(plain, 'ipv6');
  }
  return true; // not an address at all: never connect to it
}

/**
 * Checks and normalizes a provider base URL as stored in settings: http(s), no user-info, no
 * `#fragment` or `?query` (refused rather than silently appended to), trailing slashes removed.
 * With `deny`, a literal private address is refused here already.
 */
export function normalizeBaseUrl(raw: string, privateNetwork: PrivateNetworkAccess = 'deny'): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new AiUrlRefusedError('The base URL is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AiUrlRefusedError('The base URL must start with http:// or https://.');
  if (url.username || url.password) throw new AiUrlRefusedError('The base URL must not contain a user name or password; put the key in the API key field.');
  if (raw.includes('#') || url.hash) throw new AiUrlRefusedError('The base URL must not contain a #fragment.');
  if (raw.includes('?') || url.search) throw new AiUrlRefusedError('The base URL must not contain a ?query.');
  checkHost(url, privateNetwork);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function hostOf(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

function checkHost(url: URL, privateNetwork: PrivateNetworkAccess): void {
  const host = hostOf(url);
  if (privateNetwork === 'deny' && isIP(host) && isPrivateAddress(host)) {
    throw new AiUrlRefusedError('The base URL points at a private network address, which this platform does not call.');
  }
  if (privateNetwork === 'deny' && /^localhost\.?$|\.localhost\.?$/i.test(host)) {
    throw new AiUrlRefusedError('The base URL points at a private network address, which this platform does not call.');
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The connection's own resolver: one lookup, every answer checked, the checked address used. */
function guardedLookup(privateNetwork: PrivateNetworkAccess) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, []);
      if (!addresses.length) return callback(Object.assign(new Error(`No address for ${hostname}`), { code: 'ENOTFOUND' }), []);
      if (privateNetwork === 'deny' && addresses.some((a) => isPrivateAddress(a.address))) {
        return callback(new AiUrlRefusedError('The AI provider host resolves to a private network address, which this platform does not call.'), []);
      }
      if (options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Resolves `hostname` once and checks every answer; the first checked address is the one to connect to. */
function resolveChecked(hostname: string, privateNetwork: PrivateNetworkAccess): Promise<LookupAddress> {
  const literal = isIP(hostname);
  if (literal) return Promise.resolve({ address: hostname, family: literal });
  return new Promise((resolve, reject) => {
    guardedLookup(privateNetwork)(hostname, { all: true }, (err, addresses) => {
      if (err) return reject(err);
      resolve((addresses as LookupAddress[])[0]!);
    });
  });
}

/**
 * The keep-alive pools. Node's agents pool by the connection's host and port (and the TLS server
 * name): the host here is always the checked address, so the pool is per checked address. Idle
 * sockets close after a few seconds (below the usual 5 s of servers' keep-alive), are unreferenced
 * (they never keep the process alive) and at most 64 stay idle per address.
 */
const POOL = { keepAlive: true, timeout: 4000, maxFreeSockets: 64, scheduling: 'lifo' } as const;
const httpAgent = new HttpAgent(POOL);
const httpsAgent = new HttpsAgent(POOL);

export interface GuardedRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
  privateNetwork: PrivateNetworkAccess;
}

/**
 * One HTTP request through the guard. Resolves with a WHATWG Response whose body streams the
 * provider's answer (read it with `readBounded` or a bounded stream reader); never follows a
 * redirect. Connection failures reject with a plain Error carrying `code` (ECONNREFUSED …);
 * refusals reject with AiUrlRefusedError before any byte is sent.
 */
export function guardedFetch(target: string, init: GuardedRequest): Promise<Response> {
  return guardedRequest(target, init).then(toResponse);
}

/**
 * The same request, answered with node's own response (a Readable of the body's network reads):
 * what a streamed completion reads, without a WHATWG stream in between. The caller reads it to
 * its end or destroys it (an abort through `signal` does).
 */
export function guardedRequest(target: string, init: GuardedRequest): Promise<IncomingMessage> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return Promise.reject(new AiUrlRefusedError('The AI provider URL is not a valid URL.'));
  }
  try {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new AiUrlRefusedError('The AI provider URL must use http or https.');
    if (url.username || url.password) throw new AiUrlRefusedError('The AI provider URL must not contain a user name or password.');
    checkHost(url, init.privateNetwork);
  } catch (err) {
    return Promise.reject(err);
  }
  const https = url.protocol === 'https:';
  const host = hostOf(url);
  return resolveChecked(host, init.privateNetwork).then(
    (checked) =>
      new Promise<IncomingMessage>((resolve, reject) => {
        const headers: Record<string, string> = { ...init.headers, host: url.host };
        // encoded once: its length and its bytes (a prompt can be hundreds of KB)
        const payload = init.body === undefined ? undefined : Buffer.from(init.body);
        if (payload) headers['content-length'] = String(payload.length);
        const options = {
          method: init.method,
          protocol: url.protocol,
          // the checked address itself: the pool is keyed by it, and no second lookup happens
          host: checked.address,
          family: checked.family,
          port: url.port || (https ? 443 : 80),
          path: `${url.pathname}${url.search}`,
          headers,
          // defence in depth: a lookup, should one happen, goes through the guard as well
          lookup: guardedLookup(init.privateNetwork) as never,
          ...(https ? { agent: httpsAgent, servername: isIP(host) ? undefined : host } : { agent: httpAgent }),
        };
        const req = (https ? httpsRequest : httpRequest)(options, resolve);
        req.setNoDelay(true);
        req.on('error', reject);
        // The abort ends this request only. (Not `signal` in the options: node would hand it to the
        // socket, which outlives the request in the pool and would be destroyed under a later one.)
        const { signal } = init;
        // Destroyed without an error (an error would be emitted on the socket too): a pending
        // request is rejected here, a response being read ends with node's 'aborted' error.
        const onAbort = () => {
          reject(Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR', cause: signal.reason }));
          req.destroy();
        };
        if (signal.aborted) onAbort();
        else {
          signal.addEventListener('abort', onAbort, { once: true });
          req.once('close', () => signal.removeEventListener('abort', onAbort));
        }
        req.end(payload);
      }),
  );
}

/** Node's response as a WHATWG Response (status outside 200–599 reported as 502). */
export function responseOf(res: IncomingMessage): Response {
  return toResponse(res);
}

function toResponse(res: IncomingMessage): Response {
  const status = res.statusCode ?? 502;
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const bodyless = status === 204 || status === 304 || status < 200;
  if (bodyless) res.resume();
  return new Response(bodyless ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
    status: status < 200 || status > 599 ? 502 : status,
    statusText: res.statusMessage ?? '',
    headers,
  });
}

/** Reads at most `maxBytes` of a body as text; the rest is not read (the stream is cancelled). `onRead` hears each network read. */
export async function readBounded(res: Response, maxBytes: number, onRead?: () => void): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onRead?.();
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks)), truncated };
}

/** Error bodies are read up to this many bytes. */
export const ERROR_BODY_MAX_BYTES = 4096;
