import { loadavg } from 'node:os';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { CARD_SELECT, libraryPageQuery, type LibraryQuery } from '../containers/api/src/worlds/library.ts';
import { librarySearch } from '../containers/api/src/worlds/library-search.ts';
import { startTestServer, type TestServer } from '../tests/support/server.ts';
import { finishBulkLoad, seedPublishedWorlds } from './library-seed.ts';

/**
 * Issue 24 benchmark: the library at 100,000 published worlds on real PostgreSQL.
 * - Search `q=dragon` (and a CJK query): the indexed search (full text + pg_trgm, ranked) against
 *   today's query before the issue (kept below: `ilike` over the live name and description, a
 *   sequential scan), both as SQL through the same read pool, 4 in flight, interleaved rounds.
 *   Goal: ≥ 10× throughput; the new search's p50 alone ≤ 5 ms (through HTTP, end to end), printed
 *   beside its SQL alone and the HTTP floor (a route without a database), interleaved.
 * - Page 500 of the library (by keyset cursor) against page 1. Goal: ≤ 1.5× the time.
 * The worlds: 1,000 authors; names of 2–3 words and descriptions of ~15 words drawn from a
 * 2,000-word vocabulary (so a given word such as "dragon" is in ~1 % of worlds), 1–3 of 40 tags,
 * one world in 20 in Japanese or Chinese.
 */
const WORLDS = 100_000;
const AUTHORS = 1_000;

/** Today's search, before issue 24 (the baseline): a scan with `ilike` over name and description. */
function baselineSearch(q: string): { text: string; params: unknown[] } {
  const key = `(extract(epoch from c.published_at) * 1000000)::bigint`;
  return {
    text: `select c.*, ${key}::text as k from (${CARD_SELECT} where w.status = 'published' and
             (coalesce(w.live_name, w.name) ilike $1 or coalesce(w.live_description, w.description) ilike $1)) c
            order by ${key} desc nulls last, c.id desc limit $2`,
    params: [`%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`, 21],
  };
}

const COMMON = ['dragon', 'castle', 'forest', 'ship', 'star', 'city', 'night', 'queen', 'sword', 'river', 'ghost', 'school', 'garden', 'storm', 'winter', 'mirror'];

let server: TestServer;
const queries: Record<string, LibraryQuery> = {
  dragon: { q: 'dragon', pageSize: 20 },
  cjk: { q: '伝説', pageSize: 20 },
};
let page500Cursor = '';

async function seedWorlds(): Promise<void> {
  const db = server.ctx.db.primary;
  await seedPublishedWorlds(db, { seed: 24, worlds: WORLDS, authors: AUTHORS, common: COMMON });
  await finishBulkLoad(db, ['worlds']);
}

const run = (sql: { text: string; params: unknown[] }) => server.ctx.db.read.query(sql.text, sql.params);
/** Requests per second of `fn` with `inFlight` at a time over `ms`. */
async function rate(fn: () => Promise<unknown>, ms: number, inFlight = 4): Promise<number> {
  const end = performance.now() + ms;
  let n = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (performance.now() < end) {
        await fn();
        n++;
      }
    }),
  );
  return n / (ms / 1000);
}
/** The times of `n` calls of `fn`, one at a time, in ms. */
async function samples(fn: () => Promise<unknown>, n: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return times;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const p50 = async (fn: () => Promise<unknown>, n: number): Promise<number> => median(await samples(fn, n));
const httpGet = async (path: string) => {
  const res = await fetch(server.url + path);
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  return res.json() as Promise<{ worlds: { id: string }[]; nextCursor: string | null }>;
};

beforeAll(async () => {
  server = await startTestServer({ DATABASE_POOL_MAX: '8', DATABASE_READ_POOL_MAX: '8' }, { redis: false });
  const t = performance.now();
  await seedWorlds();
  console.log(`\nlibrary: seeded ${WORLDS} published worlds in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  for (const q of Object.values(queries)) {
    const indexed = libraryPageQuery(q);
    const baseline = baselineSearch(q.q!);
    const countParams: unknown[] = [];
    const match = librarySearch(q.q!, countParams);
    const hits = (await server.ctx.db.read.query(`select count(*)::int as n, max(${match.rank()}) as top from worlds w where w.status = 'published' and ${match.where}`, countParams)).rows[0];
    await rate(() => run(indexed), 300);
    await rate(() => run(baseline), 300);
    const ratios: number[] = [];
    const rates: [number, number][] = [];
    for (let i = 0; i < 5; i++) {
      const a = await rate(() => run(indexed), 600);
      const b = await rate(() => run(baseline), 1500);
      ratios.push(a / b);
      rates.push([a, b]);
    }
    const middle = rates[ratios.indexOf(median(ratios))]!;
    const aloneBaseline = await p50(() => run(baseline), 10);
    console.log(
      `library: search q=${q.q} (${(hits as { n: number }).n} hits): indexed / today's throughput, median of 5 interleaved rounds, 4 in flight: ` +
        `${median(ratios).toFixed(1)}× (${middle[0].toFixed(0)} vs ${middle[1].toFixed(1)} queries/s; goal ≥ 10×); today's query p50 alone ${aloneBaseline.toFixed(1)} ms`,
    );
    // Alone: one request at a time, the route through HTTP, its SQL through the same read pool and
    // the HTTP floor (GET /api/version, no database) interleaved in 5 rounds of 40 each.
    const times = { http: [] as number[], sql: [] as number[], floor: [] as number[] };
    const path = `/api/library?q=${encodeURIComponent(q.q!)}&pageSize=20`;
    for (let i = 0; i < 20; i++) await httpGet(path);
    for (let round = 0; round < 5; round++) {
      times.http.push(...(await samples(() => httpGet(path), 40)));
      times.sql.push(...(await samples(() => run(indexed), 40)));
      times.floor.push(...(await samples(() => fetch(server.url + '/api/version').then((r) => r.json()), 40)));
    }
    const [http, sql, floor] = [times.http, times.sql, times.floor].map((t) => t.sort((a, b) => a - b));
    console.log(
      `library: q=${q.q} alone (p50 of 200, one at a time): through HTTP ${median(http!).toFixed(2)} ms (goal ≤ 5 ms; fastest ${http![0]!.toFixed(2)} ms), ` +
        `its SQL ${median(sql!).toFixed(2)} ms, the HTTP floor (GET /api/version) ${median(floor!).toFixed(2)} ms; load average ${loadavg()[0]!.toFixed(1)}`,
    );
  }

  // Walk to page 500 by cursor once; then time page 1 and page 500, interleaved.
  let cursor: string | null = null;
  for (let page = 1; page < 500; page++) {
    const body: { nextCursor: string | null } = await httpGet(`/api/library?pageSize=20${cursor ? `&cursor=${cursor}` : ''}`);
    cursor = body.nextCursor;
  }
  page500Cursor = cursor!;
  const ratios: number[] = [];
  const times: [number, number][] = [];
  for (let i = 0; i < 7; i++) {
    const first = await p50(() => httpGet('/api/library?pageSize=20'), 30);
    const far = await p50(() => httpGet(`/api/library?pageSize=20&cursor=${page500Cursor}`), 30);
    ratios.push(far / first);
    times.push([far, first]);
  }
  const middle = times[ratios.indexOf(median(ratios))]!;
  console.log(
    `library: page 500 / page 1 time (p50 of 30, median of 7 interleaved rounds): ${median(ratios).toFixed(2)}× ` +
      `(${middle[0].toFixed(2)} vs ${middle[1].toFixed(2)} ms; goal ≤ 1.5×)\n`,
  );
}, 900_000);

afterAll(async () => server?.stop());

describe('library at 100,000 published worlds', () => {
  bench('search q=dragon, indexed (HTTP)', async () => {
    await httpGet('/api/library?q=dragon&pageSize=20');
  }, { time: 2000, warmupTime: 200 });
  bench("search q=dragon, today's query (SQL, baseline)", async () => {
    await run(baselineSearch('dragon'));
  }, { time: 2000, warmupTime: 200 });
  bench('page 1 (HTTP)', async () => {
    await httpGet('/api/library?pageSize=20');
  }, { time: 2000, warmupTime: 200 });
  bench('page 500 by cursor (HTTP)', async () => {
    await httpGet(`/api/library?pageSize=20&cursor=${page500Cursor}`);
  }, { time: 2000, warmupTime: 200 });
});
