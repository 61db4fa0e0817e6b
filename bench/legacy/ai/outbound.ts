// bench/turn.bench.ts only: a copy of packages/ai/src/outbound.ts as it was before issue 24's second round (see bench/legacy/turn-route.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
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
 * - with `deny`, loopback, unspecified, RFC 1918, link-local, CGNAT, unique-local and the
 *   IPv4-mapped IPv6 forms of all of them are refused (numeric spellings such as `0x7f000001` are
 *   normalized by the URL parser first, so they are refused as what they are);
 * - redirects are never followed (node's http client does not follow them; a 3xx is the caller's
 *   provider error).
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

const REFUSED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 included
  ['127.0.0.0', 8],
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['169.254.0.0', 16], // link-local, the cloud metadata address
  ['100.64.0.0', 10], // CGNAT
] as const) {
  REFUSED.addSubnet(net, bits, 'ipv4');
}
REFUSED.addAddress('255.255.255.255', 'ipv4');
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fe80::', 10],
  ['fc00::', 7],
] as const) {
  REFUSED.addSubnet(net, bits, 'ipv6');
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

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d) or IPv4-compatible (::a.b.c.d) IPv6 address, if it is one. */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  if (g.length !== 8 || g.slice(0, 5).some((x) => x !== 0) || (g[5] !== 0xffff && g[5] !== 0)) return null;
  if (g[5] === 0 && g[6] === 0) return null; // :: and ::1 are IPv6's own
  return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
}

/** True for the addresses `deny` refuses. `address` is a literal IPv4 or IPv6 address (no brackets). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return REFUSED.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 && isIP(v4) === 4) return REFUSED.check(v4, 'ipv4');
    return REFUSED.check(address, 'ipv6');
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
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<Response>((resolve, reject) => {
    const req = send(
      url,
      {
        method: init.method,
        headers: init.body !== undefined ? { ...init.headers, 'content-length': String(Buffer.byteLength(init.body)) } : init.headers,
        signal: init.signal,
        agent: false,
        lookup: guardedLookup(init.privateNetwork) as never,
      },
      (res: IncomingMessage) => resolve(toResponse(res)),
    );
    req.on('error', reject);
    req.end(init.body);
  });
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

/** Reads at most `maxBytes` of a body as text; the rest is not read (the stream is cancelled). */
export async function readBounded(res: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: '', truncated: false };
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
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
