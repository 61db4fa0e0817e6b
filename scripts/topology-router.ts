import { readFile, stat } from 'node:fs/promises';
import { Agent, createServer, type IncomingMessage, type OutgoingHttpHeaders, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { viewerResponse } from '../infra/frame-policy.ts';
import { addProof } from '../infra/proxy-proof.ts';
import { type FunctionName, matchRoute, type Route } from '../infra/routes.ts';
import { functionUrlEvent, type LambdaHandler, writeFunctionUrlResult } from './function-url-event.ts';

/**
 * The local stand-in for production's one origin: CloudFront's router in front of the load
 * balancer (container replicas), the Lambda Function URLs and the static site, built from the
 * same route table (infra/routes.ts).
 *
 * - service: round robin over the replicas the load balancer considers healthy (GET /health 200,
 *   polled every second); a replica that refuses the connection is taken out at once and the
 *   request goes to the next one, as the load balancer does after a failed target. The answer
 *   carries `x-topology-replica: <replica id>` (this router's own diagnostic header: the load
 *   balancer adds none), so a rehearsal can tell which replica served what. A request with the
 *   cookie `topology-replica=<replica id>` goes to that replica while it is in rotation (else to
 *   the next, as round robin would): a rehearsal can seat a browser on a replica of its choice,
 *   e.g. members of one room on different replicas (tests/browser/rooms.test.ts).
 * - function: the function's deployed `handler`, invoked with a Function URL event (in production
 *   the Lambda's own process: scripts/topology.ts gives each function one).
 * - static: the built web app; a path without a file is answered by index.html (the site's error page).
 * - every request to a replica or a function carries the Router's proof (infra/proxy-proof.ts, the
 *   viewer-request code CloudFront runs; a viewer's own header of that name is overwritten) and
 *   this hop's X-Forwarded-For entry for the client: the replicas and the functions trust the
 *   forwarded address only with it (TRUST_PROXY, TRUST_PROXY_SECRET), and a function refuses a
 *   request without it.
 * - every answer passes the router's viewer-response function (infra/frame-policy.ts), as at the CDN.
 */
export interface Replica {
  id: string;
  url: string;
}

export interface LocalRouterOptions {
  routes: readonly Route[];
  replicas: readonly Replica[];
  functions: Record<FunctionName, LambdaHandler>;
  webDist: string;
  /** TRUST_PROXY_SECRET of the replicas and the functions: the proof this router adds to every request it forwards. */
  proxySecret: string;
  healthEveryMs?: number;
}

export interface LocalRouter {
  server: Server;
  /** Replica ids currently in rotation. */
  healthy(): string[];
  close(): Promise<void>;
}

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.wasm': 'application/wasm',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

/** The CDN's viewer-response function on every answer: the headers go out as it leaves them. */
function edgeResponse(uri: string, response: ServerResponse): void {
  const writeHead = response.writeHead;
  response.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const given = (typeof rest[0] === 'string' ? rest[1] : rest[0]) as OutgoingHttpHeaders | undefined;
    const headers = viewerResponse(uri, status, { ...this.getHeaders(), ...(given ?? {}) });
    for (const name of this.getHeaderNames()) this.removeHeader(name);
    return writeHead.call(this, status, headers);
  } as typeof response.writeHead;
}

/** The request's X-Forwarded-For with this hop's entry for its peer appended, as CloudFront and the load balancer do. */
function forwardedFor(request: IncomingMessage): string {
  const client = request.socket.remoteAddress ?? '127.0.0.1';
  const given = request.headers['x-forwarded-for'];
  return given ? `${Array.isArray(given) ? given.join(', ') : given}, ${client}` : client;
}

export function createLocalRouter(options: LocalRouterOptions): LocalRouter {
  const agent = new Agent({ keepAlive: true });
  const webRoot = resolve(options.webDist);
  const inRotation = new Set(options.replicas.map((r) => r.id));
  let turn = 0;

  // Target health, as the load balancer checks it: GET /health answering 200.
  const poll = setInterval(() => {
    for (const replica of options.replicas) {
      fetch(`${replica.url}/health`, { signal: AbortSignal.timeout(5_000) }).then(
        (res) => (res.status === 200 ? inRotation.add(replica.id) : inRotation.delete(replica.id)),
        () => inRotation.delete(replica.id),
      );
    }
  }, options.healthEveryMs ?? 1_000);
  poll.unref();

  function forward(replica: Replica, request: IncomingMessage, body: Buffer, response: ServerResponse): Promise<boolean> {
    return new Promise((done) => {
      const headers: Record<string, string | string[]> = {};
      for (const [name, value] of Object.entries(request.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
      headers['x-forwarded-for'] = forwardedFor(request);
      headers['x-forwarded-proto'] = 'http';
      headers['x-forwarded-host'] = request.headers.host ?? '';
      addProof(headers, options.proxySecret);
      const upstream = httpRequest(`${replica.url}${request.url ?? '/'}`, { method: request.method, headers, agent }, (answer) => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
        out['x-topology-replica'] = replica.id;
        response.writeHead(answer.statusCode ?? 502, out);
        answer.pipe(response);
        answer.on('end', () => done(true));
        answer.on('error', () => {
          response.destroy();
          done(true);
        });
      });
      upstream.on('error', () => {
        // No answer from this target (refused, reset): it leaves the rotation; the caller tries another.
        inRotation.delete(replica.id);
        done(response.headersSent);
      });
      upstream.end(body);
    });
  }

  async function service(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const pinned = /(?:^|;\s*)topology-replica=([^;]+)/.exec(request.headers.cookie ?? '')?.[1];
    for (let attempt = 0; attempt < options.replicas.length; attempt++) {
      const candidates = options.replicas.filter((r) => inRotation.has(r.id));
      if (candidates.length === 0) break;
      const replica = (attempt === 0 && candidates.find((r) => r.id === pinned)) || candidates[turn++ % candidates.length]!;
      if (await forward(replica, request, body, response)) return;
    }
    if (!response.headersSent) {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { code: 'NO_HEALTHY_TARGET', message: 'No replica is in rotation.' } }));
    }
  }

  async function fn(name: FunctionName, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const event = await functionUrlEvent(request, `${name.toLowerCase()}.lambda-url.local`);
    // The Function URL's caller is this router (CloudFront), which names the viewer and adds its proof.
    event.requestContext.http.sourceIp = '127.0.0.1';
    event.headers['x-forwarded-for'] = forwardedFor(request);
    addProof(event.headers, options.proxySecret);
    try {
      writeFunctionUrlResult(await options.functions[name](event, { functionName: name, awsRequestId: event.requestContext.requestId }), response);
    } catch {
      // What a Function URL answers when the function itself fails.
      response.writeHead(502, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Internal Server Error' }));
    }
  }

  async function file(path: string): Promise<string | undefined> {
    let decoded: string;
    try {
      decoded = decodeURIComponent(path);
    } catch {
      return undefined;
    }
    const candidates = decoded.endsWith('/') ? [`${decoded}index.html`] : [decoded, `${decoded}.html`, `${decoded}/index.html`];
    for (const candidate of candidates) {
      const full = resolve(join(webRoot, candidate));
      if (full !== webRoot && !full.startsWith(webRoot + sep)) continue;
      if ((await stat(full).catch(() => undefined))?.isFile()) return full;
    }
    return undefined;
  }

  async function site(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://site.invalid').pathname;
    const found = (await file(path)) ?? join(webRoot, 'index.html'); // the error page: deep links load the app
    const content = await readFile(found).catch(() => undefined);
    if (!content) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('The web app is not built (npm run build).');
      return;
    }
    response.writeHead(200, {
      'content-type': MIME[extname(found)] ?? 'application/octet-stream',
      'cache-control': found.includes(`${sep}assets${sep}`) ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    response.end(request.method === 'HEAD' ? undefined : content);
  }

  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://router.invalid').pathname;
    edgeResponse(path, response);
    const { target } = matchRoute(options.routes, path);
    const handled =
      target.kind === 'service' ? service(request, response) : target.kind === 'function' ? fn(target.function, request, response) : site(request, response);
    handled.catch(() => {
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
  });

  return {
    server,
    healthy: () => options.replicas.filter((r) => inRotation.has(r.id)).map((r) => r.id),
    close: async () => {
      clearInterval(poll);
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
