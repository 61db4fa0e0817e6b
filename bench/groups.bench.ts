import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { Browser } from '../tests/support/server.ts';
import { processCpu } from './baseline.ts';
import { benchSignUp } from './sign-up.ts';
import { BenchChild } from './turn-ipc.ts';

/**
 * Issue 46 benchmark: a group scene's reply costs the server no more than a single character's.
 * Through the HTTP API on real PostgreSQL and Redis, with the loopback OpenAI-compatible provider of
 * bench/turn.bench.ts (./turn-provider.ts: a fixed ~300-token reply in 100 chunks), in processes of
 * their own as a deployment has machines of its own:
 *  - the provider (./turn-provider.ts, forked);
 *  - the server (./groups-server.ts, forked): the container on a fresh database, counting every SQL
 *    statement it sends (a wrapper of `pg.Client#query` in that process only);
 *  - this process: the client (sign-ups, worlds, sessions, scenes, the replies, the report).
 * Two paths, interleaved in rotating order in the same run, at concurrency 1 and 10 (one session or
 * scene per account):
 *  - `single`: POST /api/sessions/:id/messages, a player's message and one character's reply;
 *  - `group`: POST /api/groups/:id/replies with `content` in a scene of three characters in
 *    `in-turn` mode: a player's message and one character's reply (the next in list order),
 *    written with that character's card, the scene's shared state and the scene's history.
 * Both read the streamed answer to its end. Each phase reads the server process's CPU (user +
 * system, /proc/<pid>/stat) and its statement count before and after; the figures are per reply:
 * everything the server did during the phases (auth, the turn lock, reads, writes, the prompt, the
 * provider's stream, its idle share) divided by the replies. Printed as `groups:` lines.
 * Goal: group / single ≤ 1.0× in both, CPU per reply and statements per reply.
 * GROUPS_BENCH_PROFILE=<file.cpuprofile> writes CPU profiles of the server over each path alone first.
 */
const ACCOUNTS = 10;
const sample = JSON.parse(readFileSync(new URL('../packages/world/samples/ashen-depths.json', import.meta.url), 'utf8'));

type Path = 'single' | 'group';
interface Player {
  browser: Browser;
  /** Three worlds of the player's (the sample under three names): the first is the single path's, all three the scene's characters. */
  worldIds: string[];
  sessions: Record<Path, string>;
}

let serverChild: BenchChild | undefined;
let providerChild: BenchChild | undefined;
let serverUrl = '';
const players: Player[] = [];

/** Reads an SSE answer to its end (`endMarker`), failing on `errorMarker`. */
async function readToEnd(res: Response, endMarker: string, errorMarker: string): Promise<void> {
  if (res.status !== 200 || !res.body) throw new Error(`reply failed: ${res.status} ${await res.text()}`);
  const text = await res.text();
  if (!text.includes(endMarker) || text.includes(errorMarker)) throw new Error(`reply did not finish: ${text.slice(-400)}`);
}

async function oneReply(path: Path, player: Player): Promise<void> {
  if (path === 'single') {
    const res = await player.browser.fetch(`/api/sessions/${player.sessions.single}/messages`, { method: 'POST', json: { content: 'I walk on.' } });
    return readToEnd(res, 'event: done', 'event: error');
  }
  const res = await player.browser.fetch(`/api/groups/${player.sessions.group}/replies`, { method: 'POST', json: { content: 'I walk on.' } });
  return readToEnd(res, 'event: end', 'event: reply:error');
}

async function watched<T>(work: Promise<T>): Promise<T> {
  return Promise.race([work, serverChild!.failed, providerChild!.failed]);
}

interface Phase {
  replies: number;
  cpuMs: number;
  statements: number;
}

/** `perWorker` replies in each of `concurrency` sessions at once. */
async function phase(path: Path, concurrency: number, perWorker: number): Promise<Phase> {
  const pid = serverChild!.child.pid!;
  const cpuBefore = processCpu(pid);
  const statementsBefore = await serverChild!.request<number>('statements');
  await watched(
    Promise.all(
      players.slice(0, concurrency).map(async (player) => {
        for (let i = 0; i < perWorker; i++) await oneReply(path, player);
      }),
    ),
  );
  const cpuAfter = processCpu(pid);
  const statementsAfter = await serverChild!.request<number>('statements');
  await providerChild!.request('reset'); // the loopback provider records requests: keep its memory flat
  const cpuMs = (cpuAfter.user - cpuBefore.user + cpuAfter.system - cpuBefore.system) / 1000;
  return { replies: concurrency * perWorker, cpuMs, statements: statementsAfter - statementsBefore };
}

/** A fresh session of the first world and a fresh scene of all three for every player (both histories grow alike). */
async function freshSessions(): Promise<void> {
  for (const player of players) {
    const single = await player.browser.fetch(`/api/worlds/${player.worldIds[0]}/sessions`, { method: 'POST' });
    player.sessions.single = ((await single.json()) as { session: { id: string } }).session.id;
    const group = await player.browser.fetch('/api/groups', { method: 'POST', json: { characters: player.worldIds, replyMode: 'in-turn' } });
    if (group.status !== 201) throw new Error(`scene not started: ${group.status} ${await group.text()}`);
    player.sessions.group = ((await group.json()) as { session: { id: string } }).session.id;
  }
}

beforeAll(async () => {
  const [provider, server] = await Promise.allSettled([
    BenchChild.start('provider', new URL('./turn-provider.ts', import.meta.url)),
    BenchChild.start('server', new URL('./groups-server.ts', import.meta.url)),
  ]);
  if (provider.status === 'fulfilled') providerChild = provider.value.child;
  if (server.status === 'fulfilled') serverChild = server.value.child;
  if (provider.status === 'rejected') throw provider.reason;
  if (server.status === 'rejected') throw server.reason;
  const providerUrl = String(provider.value.ready.url);
  const chunks = Number(provider.value.ready.chunks);
  serverUrl = String(server.value.ready.url);
  const dataDir = String(server.value.ready.dataDir);
  const stamp = Date.now();
  for (let i = 0; i < ACCOUNTS; i++) {
    const browser = new Browser(serverUrl);
    await watched(benchSignUp({ url: serverUrl, dataDir }, browser, { email: `groups${i}-${stamp}@example.com` }));
    await browser.fetch('/api/settings/ai', { method: 'PUT', json: { baseUrl: providerUrl, defaultModel: 'story-model', apiKey: 'any-key' } });
    const worldIds: string[] = [];
    for (const name of ['Mira', 'Tovan', 'Sel']) {
      const res = await browser.fetch('/api/worlds', { method: 'POST', json: { world: { ...sample, name } } });
      if (res.status !== 201 && res.status !== 200) throw new Error(`world not made: ${res.status} ${await res.text()}`);
      worldIds.push(((await res.json()) as { id: string }).id);
    }
    players.push({ browser, worldIds, sessions: { single: '', group: '' } });
  }
  await watched(freshSessions());
  if (process.env.GROUPS_BENCH_PROFILE) {
    // GROUPS_BENCH_PROFILE=<file>: a CPU profile of the server during the group path alone (then <file>.single for the single path)
    for (const path of ['single', 'group'] as const) {
      await phase(path, 10, 2);
      await serverChild!.request('profile-start');
      for (let r = 0; r < 4; r++) await phase(path, 10, 3);
      await serverChild!.request('profile-stop', { file: path === 'group' ? process.env.GROUPS_BENCH_PROFILE : `${process.env.GROUPS_BENCH_PROFILE}.single` });
    }
    await watched(freshSessions());
  }

  const paths: Path[] = ['single', 'group'];
  const lines = ['', `groups: one reply through the HTTP API (~300-token reply in ${chunks} chunks, real PostgreSQL + Redis), single character vs a scene of three (in-turn), interleaved rounds in rotating order`];
  for (const [concurrency, perWorker, rounds] of [
    [1, 10, 10],
    [10, 3, 8],
  ] as const) {
    for (const path of paths) await phase(path, concurrency, 2); // warm-up
    const all: Record<Path, Phase[]> = { single: [], group: [] };
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 === 0 ? paths : [...paths].reverse();
      for (const path of order) all[path].push(await phase(path, concurrency, perWorker));
    }
    const per = (path: Path, key: 'cpuMs' | 'statements') => all[path].reduce((s, p) => s + p[key], 0) / all[path].reduce((s, p) => s + p.replies, 0);
    const show = (path: Path) => `${path.padEnd(6)} ${per(path, 'cpuMs').toFixed(2)} ms server CPU/reply, ${per(path, 'statements').toFixed(1)} SQL statements/reply`;
    lines.push(
      `  concurrency ${String(concurrency).padStart(2)}: ${show('single')}`,
      `                  ${show('group')}`,
      `                  group/single: CPU per reply ${(per('group', 'cpuMs') / per('single', 'cpuMs')).toFixed(2)}×, statements per reply ${(per('group', 'statements') / per('single', 'statements')).toFixed(2)}× (goal ≤ 1.0× both)`,
    );
    await watched(freshSessions());
  }
  console.log(`${lines.join('\n')}\n`);
}, 900_000);

afterAll(async () => {
  await Promise.all([serverChild?.stop(), providerChild?.stop()]);
});

describe('groups: one reply through the HTTP API, concurrency 1', () => {
  bench('POST /api/sessions/:id/messages (one character)', async () => void (await oneReply('single', players[0]!)), { time: 1500, warmupTime: 200 });
  bench('POST /api/groups/:id/replies (a scene of three, in turn)', async () => void (await oneReply('group', players[1]!)), { time: 1500, warmupTime: 200 });
});
