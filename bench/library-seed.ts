import type { Queryable } from '@yumina/db';

/**
 * The published worlds of the library benchmarks (bench/library.bench.ts, issue 24, and
 * bench/library-scale.bench.ts, issue 32), from a seeded generator so that every run sees the same
 * library: 1 author per `worlds / authors`; names of 2–3 words and descriptions of ~15 words drawn
 * from a 2,000-word vocabulary (the `common` words first, then three-syllable words), 1–3 of 40
 * tags, one world in 20 in Japanese or Chinese. With `markers`, each marker word is appended to the
 * description of about its share of the worlds.
 */
export interface LibrarySeed {
  seed: number;
  worlds: number;
  authors: number;
  /** Accounts made besides the authors (players), after them in the id sequence. */
  players?: number;
  /** Words that lead the vocabulary (so each is in about 1 / 2,000 of the descriptions' words). */
  common?: readonly string[];
  /** Marker words and the share of worlds whose description carries each. */
  markers?: Readonly<Record<string, number>>;
}

/** The GIN indexes a bulk load fills through their pending list (fastupdate), merged by the vacuum after it. */
const GIN = ['worlds_search_vector_idx', 'worlds_search_trgm_idx', 'worlds_live_tags_idx'];

const SYLLABLES = ['ka', 'ro', 'mi', 'than', 'el', 'dor', 'sha', 'vin', 'lu', 'gar', 'ith', 'mo', 'ren', 'bal', 'zu', 'qua', 'lor', 'est', 'nim', 'tor'];
const TAGS = Array.from({ length: 40 }, (_, i) => `tag${i}`);
const CJK = ['龍の伝説', '古代の龍が眠る山', '星际旅行者', '飞船在银河中漂流', '魔法学校の夜', '雪の城', '森林的秘密', '海辺の町'];

/**
 * Makes the accounts (`acc_benchauthor<n>`: the authors, then the players) and the published
 * worlds (`wld_bench<n>`), with the GIN indexes taking entries into their pending list meanwhile.
 * Call finishBulkLoad once everything else is loaded.
 */
export async function seedPublishedWorlds(db: Queryable, options: LibrarySeed): Promise<void> {
  let seed = options.seed;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const vocabulary: string[] = [...(options.common ?? [])];
  while (vocabulary.length < 2000) vocabulary.push(pick(SYLLABLES) + pick(SYLLABLES) + pick(SYLLABLES));
  const sentence = (n: number) => Array.from({ length: n }, () => pick(vocabulary)).join(' ');
  const markers = Object.entries(options.markers ?? {});
  // The markers draw from a generator of their own: drawn from the one above, interleaved with the
  // other draws, the rarest (0.1 %) never came up (that generator's successive values are correlated).
  let markerSeed = options.seed ^ 0x9e3779b9;
  const markerRandom = () => {
    // mulberry32
    markerSeed = (markerSeed + 0x6d2b79f5) | 0;
    let t = Math.imul(markerSeed ^ (markerSeed >>> 15), 1 | markerSeed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };

  await db.query(
    `insert into accounts (id, email, display_name)
     select 'acc_benchauthor' || lpad(i::text, 8, '0'), 'bench' || i || '@example.com', 'Author ' || i from generate_series(1, $1) i`,
    [options.authors + (options.players ?? 0)],
  );
  // A bulk load: the GIN indexes take entries into their pending list meanwhile (fastupdate), and
  // finishBulkLoad's vacuum merges it; the indexes then answer searches without one, as in production.
  for (const index of GIN) await db.query(`alter index ${index} set (fastupdate = on)`);
  const batch = 5000;
  for (let start = 0; start < options.worlds; start += batch) {
    const cols: unknown[][] = [[], [], [], [], [], [], []];
    for (let i = start; i < start + batch; i++) {
      const cjk = random() < 0.05;
      const marked = markers.filter(([, share]) => markerRandom() < share).map(([word]) => word);
      const name = cjk ? pick(CJK) + ' ' + (i % 97) : sentence(2 + Math.floor(random() * 2));
      const description = (cjk ? pick(CJK) + '。' + pick(CJK) + '。' : sentence(12 + Math.floor(random() * 6)) + '.') + (marked.length ? ` ${marked.join(' ')}` : '');
      const tags = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(TAGS));
      cols[0]!.push(`wld_bench${String(i).padStart(7, '0')}`);
      cols[1]!.push(`acc_benchauthor${String(1 + (i % options.authors)).padStart(8, '0')}`);
      cols[2]!.push(name);
      cols[3]!.push(description);
      cols[4]!.push(`{${[...new Set(tags)].join(',')}}`);
      cols[5]!.push(cjk ? pick(['ja', 'zh']) : 'en');
      cols[6]!.push(i);
    }
    await db.query(
      `insert into worlds (id, owner_id, name, description, tags, language, definition, status, published_at,
                           live_name, live_description, live_tags, live_language, live_updated_at, live_definition)
       select id, owner, name, description, tags::text[], language, '{}', 'published', now() - make_interval(secs => n),
              name, description, tags::text[], language, now() - make_interval(secs => n), '{}'
         from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[])
              as t(id, owner, name, description, tags, language, n)`,
      cols,
    );
  }
}

/** After the bulk load: vacuums `tables` (merging the GIN pending lists), turns fastupdate off again and analyzes the accounts. */
export async function finishBulkLoad(db: Queryable, tables: readonly string[]): Promise<void> {
  for (const table of tables) await db.query(`vacuum analyze ${table}`);
  for (const index of GIN) await db.query(`alter index ${index} set (fastupdate = off)`);
  await db.query('analyze accounts');
}
