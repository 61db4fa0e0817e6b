import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What a Lambda Function URL hands a function (payload format 2.0) and what it takes back, for
 * invoking the real `handler` exports of functions/ the way AWS does (scripts/topology.ts).
 */
export interface FunctionUrlEvent {
  version: '2.0';
  routeKey: '$default';
  rawPath: string;
  rawQueryString: string;
  cookies?: string[];
  headers: Record<string, string>;
  queryStringParameters?: Record<string, string>;
  requestContext: {
    accountId: 'anonymous';
    apiId: string;
    domainName: string;
    domainPrefix: string;
    http: { method: string; path: string; protocol: string; sourceIp: string; userAgent: string };
    requestId: string;
    routeKey: '$default';
    stage: '$default';
    time: string;
    timeEpoch: number;
  };
  body?: string;
  isBase64Encoded: boolean;
}

export interface FunctionUrlResult {
  statusCode: number;
  headers?: Record<string, string | number | boolean>;
  multiValueHeaders?: Record<string, (string | number | boolean)[]>;
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
}

export type LambdaHandler = (event: FunctionUrlEvent, context: unknown) => Promise<FunctionUrlResult>;

const TEXT_TYPES = /^(text\/|application\/(json|x-www-form-urlencoded|xml|javascript))/;

/** An HTTP request as a Function URL event: headers lower-cased and comma-joined, cookies apart, binary bodies in base64. */
export async function functionUrlEvent(request: IncomingMessage, functionHost: string): Promise<FunctionUrlEvent> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return buildFunctionUrlEvent({
    method: request.method ?? 'GET',
    url: request.url ?? '/',
    headers: request.headers,
    body: Buffer.concat(chunks),
    sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
    functionHost,
  });
}

export interface RequestParts {
  method: string;
  /** Path and query. */
  url: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: Buffer | string;
  sourceIp?: string;
  functionHost?: string;
}

/** The Function URL event (payload 2.0) of a request given by its parts. */
export function buildFunctionUrlEvent(parts: RequestParts): FunctionUrlEvent {
  const functionHost = parts.functionHost ?? 'function.lambda-url.local';
  const url = new URL(parts.url, 'http://function.invalid');
  const body = typeof parts.body === 'string' ? Buffer.from(parts.body) : (parts.body ?? Buffer.alloc(0));
  const headers: Record<string, string> = {};
  let cookieHeader: string | undefined;
  for (const [rawName, value] of Object.entries(parts.headers ?? {})) {
    const name = rawName.toLowerCase();
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(name === 'cookie' ? '; ' : ',') : value;
    if (name === 'cookie') cookieHeader = joined;
    else headers[name] = joined;
  }
  headers.host = functionHost;
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = query[name] === undefined ? value : `${query[name]},${value}`;
  const cookies = cookieHeader?.split(/;\s*/).filter(Boolean);
  const text = TEXT_TYPES.test(headers['content-type'] ?? '');
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    ...(cookies?.length ? { cookies } : {}),
    headers,
    ...(url.search ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: 'anonymous',
      apiId: functionHost.split('.')[0]!,
      domainName: functionHost,
      domainPrefix: functionHost.split('.')[0]!,
      http: {
        method: parts.method,
        path: url.pathname,
        protocol: 'HTTP/1.1',
        sourceIp: parts.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length ? { body: text ? body.toString('utf8') : body.toString('base64') } : {}),
    isBase64Encoded: body.length > 0 && !text,
  };
}

/** Writes a function's result as the Function URL would answer it. */
export function writeFunctionUrlResult(result: FunctionUrlResult, response: ServerResponse): void {
  for (const [name, value] of Object.entries(result.headers ?? {})) response.setHeader(name, String(value));
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {})) response.setHeader(name, values.map(String));
  if (result.cookies?.length) response.setHeader('set-cookie', result.cookies);
  response.statusCode = result.statusCode;
  response.end(result.body === undefined ? undefined : Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8'));
}
