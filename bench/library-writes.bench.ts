import { loadavg } from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, bench, describe } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../tests/support/postgres.ts';

/**
 * Issue 51 (point 11): what the library's bookkeeping triggers add to a write, as the library
 * grows. The triggers: world_terms (migration 098: one row per word of a published world, kept by
 * worlds_terms_inserted / _updated / _deleted) and the player counts (migration 092: world_players
 * and worlds.player_count, kept by chat_sessions_player_started / _deleted).
 *
 * On real PostgreSQL (the test database server, DATABASE_URL when set), one connection, at
 * libraries of 1,000, 10,000 and 100,000 published worlds with 3 sessions each (of 20,000
 * players), seeded in SQL (generate_series; the triggers off meanwhile and their tables filled
 * set-wise afterwards, as the migrations fill them). At each size, N single writes of each kind,
 * the app's own statements:
 * - world: create (routes.ts POST /api/worlds insert) and publish (review.ts publishWorld's update
 *   and its event), one transaction;
 * - session: a new player's first session of a random world (new-session.ts insert), which counts
 *   them (world_players row, worlds.player_count + 1);
 * - session delete: the last session of that player in that world, which uncounts them;
 * in blocks of 25 alternating with the same statements with those triggers disabled
 * (ALTER TABLE … DISABLE TRIGGER; the rows written meanwhile are removed again with them off).
 * Prints p50 / p99 of each, and the triggers' share: `library-writes:` lines.
 */
const SIZES = [1_000, 10_000, 100_000];
const AUTHORS = 1_000;
const PLAYERS = 20_000;
const SESSIONS_PER_WORLD = 3;
const N = 200;
/** Accounts with no session, each session's player. */
const NEWCOMERS = 10_000;
const BLOCK = 25;

const TRIGGERS = {
  worlds: ['worlds_terms_inserted', 'worlds_terms_updated', 'worlds_terms_deleted'],
  chat_sessions: ['chat_sessions_player_started', 'chat_sessions_player_deleted'],
} as const;

const GIN = ['worlds_search_vector_idx', 'worlds_search_trgm_idx', 'worlds_live_tags_idx', 'worlds_live_name_trgm_idx'];

let database: TestDatabase;
let c: pg.Client;

async function triggers(on: boolean): Promise<void> {
  for (const [table, names] of Object.entries(TRIGGERS)) for (const name of names) await c.query(`alter table ${table} ${on ? 'enable' : 'disable'} trigger ${name}`);
}

/** Words of a seeded world: 2,000-word vocabulary, name 2–3 words, description 15, 1–3 of 40 tags. */
const WORD = (expr: string) => `(array['ka','ro','mi','than','el','dor','sha','vin','lu','gar','ith','mo','ren','bal','zu','qua','lor','est','nim','tor'])[1 + (${expr}) % 20]`;
const VOCAB = (n: string) => `${WORD(`(${n}) % 2000`)} || ${WORD(`(${n}) / 20 % 20 + 3`)} || ${WORD(`(${n}) / 400 % 20 + 7`)}`;

/** Grows the library to `to` published worlds (ids from `from`), 3 sessions each, with the bookkeeping tables in step. */
async function grow(from: number, to: number): Promise<void> {
  await triggers(false);
  // A bulk load: the GIN indexes take entries into their pending list meanwhile, merged by the vacuum below (as bench/library-seed.ts).
  for (const index of GIN) await c.query(`alter index ${index} set (fastupdate = on)`);
  await c.query(
    `insert into worlds (id, owner_id, name, description, tags, language, definition, status, published_at,
                         live_name, live_description, live_tags, live_language, live_updated_at, live_definition, revision, live_revision)
     select id, owner, name, description, tags, 'en', '{}', 'published', now() - make_interval(secs => i), name, description, tags, 'en', now() - make_interval(secs => i), '{}', 1, 1
       from (select i, 'wld_lw' || lpad(i::text, 7, '0') as id, 'acc_libwrites' || lpad((1 + i % ${AUTHORS})::text, 8, '0') as owner,
                    (select string_agg(${VOCAB('i * 7919 + j * 104729')}, ' ') from generate_series(1, 2 + i % 2) j) as name,
                    (select string_agg(${VOCAB('i * 15485863 + j * 32452843')}, ' ') from generate_series(1, 15) j) || '.' as description,
                    (select array_agg(distinct 'tag' || ((i * 31 + j * 17) % 40)) from generate_series(1, 1 + i % 3) j) as tags
               from generate_series($1::bigint, $2::bigint - 1) i) w`,
    [from, to],
  );
  await c.query(
    `insert into chat_sessions (id, world_id, account_id, seed, state, initial_state)
     select 'cnv_lw' || i || '_' || k, 'wld_lw' || lpad(i::text, 7, '0'),
            'acc_libwrites' || lpad((${AUTHORS} + 1 + (i * 7 + k * 6841) % ${PLAYERS})::text, 8, '0'), 's', '{}', '{}'
       from generate_series($1::int, $2::int - 1) i, generate_series(1, ${SESSIONS_PER_WORLD}) k`,
    [from, to],
  );
  // As migrations 092 and 098 fill them for an existing database.
  await c.query(
    `insert into world_terms (lexeme, world_id, k)
     select t.* from worlds w, world_terms_of(w.id, w.search_vector, coalesce(w.live_name, w.name)) t
      where w.id >= 'wld_lw' || lpad($1::text, 7, '0') and w.id < 'wld_lw' || lpad($2::text, 7, '0') and w.status = 'published'`,
    [from, to],
  );
  await c.query(
    `insert into world_players (world_id, account_id) select distinct world_id, account_id from chat_sessions
      where world_id >= 'wld_lw' || lpad($1::text, 7, '0') and world_id < 'wld_lw' || lpad($2::text, 7, '0') on conflict do nothing`,
    [from, to],
  );
  await c.query(
    `update worlds w set player_count = p.n from (select world_id, count(*)::int as n from world_players group by world_id) p
      where p.world_id = w.id and w.player_count is distinct from p.n`,
  );
  await triggers(true);
  for (const table of ['worlds', 'chat_sessions', 'world_players', 'world_terms']) await c.query(`vacuum analyze ${table}`);
  for (const index of GIN) await c.query(`alter index ${index} set (fastupdate = off)`);
}

let serial = 0;
const DEFINITION = JSON.stringify({ name: 'x', description: '' });

/** Creates and publishes one world as the app does; returns its id. */
async function createWorld(): Promise<string> {
  const n = ++serial;
  const id = `wld_new${n}`;
  const owner = `acc_libwrites${String(1 + (n % AUTHORS)).padStart(8, '0')}`;
  const name = `${['dragon', 'keep', 'star', 'forest'][n % 4]} tale ${n}`;
  const description = `A fresh world number ${n} with a description of about fifteen words, like the library's others.`;
  await c.query('begin');
  await c.query(
    `insert into worlds (id, owner_id, name, description, tags, language, definition)
     values ($1, $2, $3, $4, $5, $6, $7) returning *`,
    [id, owner, name, description, ['tag1', 'tag7'], 'en', DEFINITION],
  );
  await c.query(
    `update worlds set status = 'published', published_at = coalesce(published_at, now()),
            live_revision = revision, live_definition = definition, live_name = name,
            live_description = description, live_tags = tags, live_language = language,
            live_cover_asset_id = cover_asset_id, live_avatar_asset_id = avatar_asset_id, live_updated_at = now()
      where id = $1`,
    [id],
  );
  await c.query(`insert into world_publication_events (world_id, owner_id, actor_id, action, revision, review_id, reason) values ($1, $2, $2, 'published', 1, null, null)`, [id, owner]);
  await c.query('commit');
  return id;
}

/** A new player's first session of a world of the library, as new-session.ts inserts it. */
async function createSession(size: number): Promise<{ id: string; world: string }> {
  const n = ++serial;
  const id = `cnv_new${n}`;
  const world = `wld_lw${String((n * 7919) % size).padStart(7, '0')}`;
  // A newcomer: no session of any world yet.
  const account = `acc_libwritesnew${String(n % NEWCOMERS).padStart(8, '0')}`;
  await c.query('begin');
  await c.query(
    `insert into chat_sessions (id, world_id, account_id, title, seed, state, initial_state, message_count, branched_from) values ($1, $2, $3, $4, $5, $6, $6, $7, $8)`,
    [id, world, account, 'A title', 'abcdef0123456789', '{}', 0, null],
  );
  await c.query('commit');
  return { id, world };
}

const q = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const fmt = (xs: number[]) => `${q(xs, 0.5).toFixed(2)} / ${q(xs, 0.99).toFixed(2)} ms`;

async function timed<T>(f: () => Promise<T>, into: number[]): Promise<T> {
  const t = performance.now();
  const r = await f();
  into.push(performance.now() - t);
  return r;
}

interface Figures { world: number[]; session: number[]; remove: number[] }
const empty = (): Figures => ({ world: [], session: [], remove: [] });

async function measure(size: number): Promise<void> {
  const on = empty();
  const off = empty();
  const offWorlds: string[] = [];
  const onWorlds: string[] = [];
  for (let block = 0; block < (2 * N) / BLOCK; block++) {
    const triggered = block % 2 === 0;
    if (!triggered) await triggers(false);
    const into = triggered ? on : off;
    const sessions: string[] = [];
    for (let i = 0; i < BLOCK; i++) {
      (triggered ? onWorlds : offWorlds).push(await timed(createWorld, into.world));
      sessions.push((await timed(() => createSession(size), into.session)).id);
    }
    for (const id of sessions) await timed(() => c.query('delete from chat_sessions where id = $1', [id]), into.remove);
    if (!triggered) {
      // The rows written with the triggers off go again with them off (the bookkeeping never saw them).
      await c.query('delete from world_publication_events where world_id = any($1)', [offWorlds]);
      await c.query('delete from worlds where id = any($1)', [offWorlds]);
      offWorlds.length = 0;
      await triggers(true);
    }
  }
  // What a first session's trigger does, statement by statement (autocommit each): the player's
  // row, and the count's update, which changes an indexed column (the popular sort's) so every index
  // of worlds takes a new entry, against an update of an unindexed one (a HOT update).
  const parts = { players: [] as number[], count: [] as number[], hot: [] as number[] };
  for (let i = 0; i < N; i++) {
    const world = `wld_lw${String((i * 7919) % size).padStart(7, '0')}`;
    await timed(() => c.query('insert into world_players (world_id, account_id) values ($1, $2) on conflict do nothing', [world, `acc_probe${size}_${i}`]), parts.players);
    await timed(() => c.query('update worlds set player_count = player_count + 1 where id = $1', [world]), parts.count);
    await timed(() => c.query('update worlds set rooms_allowed = rooms_allowed where id = $1', [world]), parts.hot);
    await c.query('update worlds set player_count = player_count - 1 where id = $1', [world]);
  }
  await c.query(`delete from world_players where account_id like 'acc_probe%'`);
  await c.query('delete from world_publication_events where world_id = any($1)', [onWorlds]);
  await c.query('delete from worlds where id = any($1)', [onWorlds]);
  const terms = await c.query<{ n: string }>('select count(*) as n from world_terms');
  console.log(
    `library-writes: ${size.toLocaleString('en')} worlds (${(size * SESSIONS_PER_WORLD).toLocaleString('en')} sessions, ${Number(terms.rows[0]!.n).toLocaleString('en')} world_terms rows), p50 / p99 of ${N} each:`,
  );
  for (const [label, key] of [['create + publish a world', 'world'], ['create a session (new player)', 'session'], ['delete that session', 'remove']] as const) {
    const added = q(on[key], 0.5) - q(off[key], 0.5);
    console.log(`library-writes:   ${label}: ${fmt(on[key])} with the triggers, ${fmt(off[key])} without (+${added.toFixed(2)} ms p50)`);
  }
  console.log(
    `library-writes:   a first session's trigger, statement by statement: world_players row ${fmt(parts.players)}, player_count + 1 ${fmt(parts.count)} (an update of an unindexed column: ${fmt(parts.hot)})`,
  );
}

beforeAll(async () => {
  database = await createTestDatabase({ migrated: true });
  c = new pg.Client({ connectionString: database.url });
  await c.connect();
  await c.query(
    `insert into accounts (id, email, display_name)
     select 'acc_libwrites' || lpad(i::text, 8, '0'), 'lw' || i || '@example.com', 'Author ' || i from generate_series(1, $1::int) i`,
    [AUTHORS + PLAYERS],
  );
  await c.query(`insert into accounts (id, email, display_name) select 'acc_libwritesnew' || lpad(i::text, 8, '0'), 'lwn' || i || '@example.com', 'Newcomer ' || i from generate_series(0, $1::int - 1) i`, [NEWCOMERS]);
  console.log(`\nlibrary-writes: load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} before seeding`);
  let have = 0;
  for (const size of SIZES) {
    const t = performance.now();
    await grow(have, size);
    have = size;
    console.log(`library-writes: grew the library to ${size.toLocaleString('en')} worlds in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    await measure(size);
    console.log(`library-writes: load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  }
}, 1_800_000);

afterAll(async () => {
  await c?.end();
  await database?.drop();
});

describe('library writes as the library grows (issue 51)', () => {
  bench('create + publish a world (100,000 worlds)', async () => {
    await createWorld();
  }, { time: 500 });
});
