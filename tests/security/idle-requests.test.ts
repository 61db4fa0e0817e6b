import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEvents } from '../support/collector.ts';
import { fakeReplies, type FakeOpenAi, startFakeOpenAi } from '../support/fake-openai.ts';
import { Browser, startTestServer, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Issue 43, point 1: idle half-sent requests must not hold the admission queue. Anonymous raw
 * sockets send a turn's (and a live update stream's) request line and headers and a few bytes of
 * the body they announced, then nothing: before the fix each took a place of the queue in the
 * server's request callback and kept it while its body never came, so every player's turn and
 * stream opening got 503 SERVER_BUSY for as long as the sockets stayed open. Now a place is held
 * only by a request whose body has arrived; an unfinished body is cut at its deadline (408, the
 * connection closed), and headers that never end at the headers deadline. A small queue (2 slots,
 * 4 waiting) so that a few sockets would fill it.
 */
const TURN_SOCKETS = 50;
const STREAM_SOCKETS = 30;
/** The turn body's deadline and Node's request deadline here (long enough for a player's turn to run meanwhile). */
const BODY_TIMEOUT_MS = 8_000;
const HEADERS_TIMEOUT_MS = 3_000;
const REQUEST_TIMEOUT_MS = 12_000;

const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8')) as unknown;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A raw socket that wrote `head` and then stays idle; `received` collects what the server sends, `closed` settles when the server ends it. */
interface IdleSocket {
  socket: Socket;
  received: () => string;
  closed: Promise<void>;
}

function idleRequest(port: number, head: string): Promise<IdleSocket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    const closed = new Promise<void>((done) => socket.once('close', () => done()));
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write(head);
      resolve({ socket, received: () => text, closed });
    });
  });
}

/** A turn's head and the first bytes of the 200 its Content-Length announces. */
const halfTurn = (sessionId: string) =>
  `POST /api/sessions/${sessionId}/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"con`;
/** A stream opening's head announcing a body, and its first bytes. */
const halfStream = (worldId: string) =>
  `GET /api/worlds/${worldId}/updates/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nContent-Length: 100\r\n\r\nab`;

/** `promise`, or a failure naming `what` when it has not settled within `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe('idle half-sent requests hold no place of the admission queue (issue 43, point 1)', () => {
  let server: TestServer;
  let fake: FakeOpenAi;
  let port: number;
  let player: Browser;
  let worldId: string;
  let sessionId: string;
  const idle: IdleSocket[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: 'sk-official' });
    server = await startTestServer({
      OFFICIAL_AI_BASE_URL: fake.url,
      OFFICIAL_AI_API_KEY: 'sk-official',
      OFFICIAL_AI_MODEL: 'official-model',
      WELCOME_CREDITS: '1000',
      ADMISSION_CONCURRENCY: '2',
      ADMISSION_QUEUE: '4',
      ADMISSION_WARM_UP: '0',
      ADMISSION_BODY_TIMEOUT_MS: String(BODY_TIMEOUT_MS),
      HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    });
    port = Number(new URL(server.url).port);
    player = new Browser(server.url);
    expect((await signUp(server, player, { email: 'idle-victim@example.com', password: 'long enough pw' })).status).toBe(201);
    const created = await player.fetch('/api/worlds', { method: 'POST', json: { world } });
    expect(created.status).toBe(201);
    worldId = ((await created.json()) as { id: string }).id;
    const session = await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' });
    expect(session.status).toBe(201);
    sessionId = ((await session.json()) as { session: { id: string } }).session.id;
    fake.setHandler(() => fakeReplies.completion('The torch flares.'));
  }, 120_000);
  afterAll(async () => {
    for (const s of idle) s.socket.destroy();
    await server?.stop();
    await fake?.close();
  });

  it(`${TURN_SOCKETS} half-sent turns and ${STREAM_SOCKETS} half-sent stream opens, idle: a player's turn and stream opening still succeed`, async () => {
    for (let i = 0; i < TURN_SOCKETS; i++) idle.push(await idleRequest(port, halfTurn(`sess_${i}`)));
    for (let i = 0; i < STREAM_SOCKETS; i++) idle.push(await idleRequest(port, halfStream(`wld_missing${i}`)));
    // Every socket accepted, then time for the server to read their heads (and, before the fix, to hand out its places).
    const connections = () => new Promise<number>((resolve, reject) => server.app.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
    await expect.poll(connections, { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(TURN_SOCKETS + STREAM_SOCKETS);
    await sleep(500);

    const turn = await player.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: 'I light a torch.' } });
    const turnBody = turn.status === 200 ? '' : await turn.text();
    expect({ status: turn.status, body: turnBody }).toEqual({ status: 200, body: '' });
    expect((await readEvents(turn)).at(-1)!.event).toBe('done');

    const abort = new AbortController();
    const stream = await player.fetch(`/api/worlds/${worldId}/updates/events`, { headers: { accept: 'text/event-stream' }, signal: abort.signal });
    const streamBody = stream.status === 200 ? '' : await stream.text();
    expect({ status: stream.status, body: streamBody }).toEqual({ status: 200, body: '' });
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    abort.abort();

    // The idle turns were still connected and unanswered meanwhile: the queue was free with them open.
    const turns = idle.slice(0, TURN_SOCKETS);
    expect(turns.filter((s) => s.socket.destroyed || s.received() !== '').length).toBe(0);
  }, 60_000);

  it('a turn whose body stops arriving is answered 408 at its body deadline, its connection closed', async () => {
    const turns = idle.slice(0, TURN_SOCKETS);
    await within(Promise.all(turns.map((s) => s.closed)), BODY_TIMEOUT_MS + 15_000, 'the idle turns closed');
    for (const s of turns) {
      expect(s.received()).toMatch(/^HTTP\/1\.1 408 /);
      expect(s.received()).toMatch(/"code":"REQUEST_TIMEOUT"/);
    }
  }, 60_000);

  it('headers that never end: the connection is answered 408 and closed at the headers deadline', async () => {
    const partial = await idleRequest(port, `POST /api/sessions/sess_x/messages HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n`);
    idle.push(partial);
    await within(partial.closed, HEADERS_TIMEOUT_MS + 15_000, 'the unfinished head closed');
    expect(partial.received()).toMatch(/^HTTP\/1\.1 408 /);
  }, 60_000);
});
