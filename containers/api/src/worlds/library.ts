import type { Queryable } from '@yumina/db';
import { HttpError, parseWith } from '@yumina/http';
import { assetPath } from '@yumina/sandbox';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { privateConnection } from '../accounts/ai-connection.ts';
import { authenticate, requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { LIVE_WHERE } from './version.ts';
import { containsPattern, librarySearch } from './library-search.ts';

/**
 * Library sorts: newest publication, most players, most recently updated live version, and
 * (with a search query, where it is the default) relevance.
 */
export const LIBRARY_SORTS = ['new', 'popular', 'updated', 'relevance'] as const;
export type LibrarySort = (typeof LIBRARY_SORTS)[number];

/**
 * A keyset cursor: the last row's sort key and id, so the next page starts right after it
 * (`(key, id) < (cursor.key, cursor.id)`), never an OFFSET that rescans the skipped rows.
 * Time keys are microseconds since the epoch as integers: exact, unlike a millisecond ISO string.
 */
export interface LibraryCursor {
  key: string;
  id: string;
}

export const encodeCursor = (c: LibraryCursor): string => Buffer.from(JSON.stringify([c.key, c.id])).toString('base64url');

export function decodeCursor(text: string): LibraryCursor {
  try {
    const [key, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown[];
    if (typeof key === 'string' && /^-?\d{1,20}$/.test(key) && typeof id === 'string' && id.length <= 100) return { key, id };
  } catch {
    // falls through to the refusal
  }
  throw new HttpError(400, 'BAD_CURSOR', 'This page cursor is not valid; start again from the first page.');
}

const libraryQuery = z.object({
  q: z.string().trim().max(200).optional(),
  tag: z.string().trim().toLowerCase().max(60).optional(),
  language: z.string().trim().max(20).optional(),
  sort: z.enum(LIBRARY_SORTS).optional(),
  cursor: z.string().max(400).optional(),
  pageSize: z.coerce.number().int().min(1).max(50).default(20),
});

interface CardRow {
  id: string;
  name: string;
  description: string;
  tags: string[];
  language: string | null;
  published_at: Date | null;
  updated_at: Date | null;
  author: string | null;
  cover: string | null;
  plays: number;
  k: string;
}

/** What every world card shows, a library card or the author's own list (worlds/routes.ts). */
export function cardFields(row: Pick<CardRow, 'id' | 'name' | 'description' | 'tags' | 'language' | 'published_at'> & { author?: string | null }) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    tags: row.tags,
    language: row.language,
    author: row.author ?? null,
    publishedAt: row.published_at?.toISOString() ?? null,
  };
}

type LibraryCard = ReturnType<typeof cardFields> & { updatedAt: string | null; coverUrl: string | null; plays: number };

/**
 * A library card: cardFields and the live version's time, cover and player count, added to the
 * same object (spreading cardFields into a new one costs ~3.6× as much per card).
 */
export function cardView(row: Omit<CardRow, 'k'>): LibraryCard {
  const card = cardFields(row) as LibraryCard;
  card.updatedAt = row.updated_at?.toISOString() ?? null;
  card.coverUrl = row.cover ? assetPath(row.id, row.cover) : null;
  card.plays = Number(row.plays);
  return card;
}

/** The sort key of each sort but relevance (the search's rank: libraryPageQuery), as a bigint expression over `w`. */
const SORT_KEY: Record<Exclude<LibrarySort, 'relevance'>, string> = {
  new: `(extract(epoch from w.published_at) * 1000000)::bigint`,
  updated: `(extract(epoch from coalesce(w.live_updated_at, w.published_at)) * 1000000)::bigint`,
  popular: `w.player_count::bigint`,
};

/**
 * The sorts that order and resume by a column itself, so an index serves every page (page 500
 * costs what page 1 costs): the time sorts (migration 085; their µs key turned back into a
 * timestamp, exactly) and the maintained player count (migration 092). `resume` turns the cursor's
 * key parameter into the column's type.
 */
const SORT_COLUMN: Partial<Record<LibrarySort, { column: string; resume: (param: string) => string }>> = {
  new: { column: 'w.published_at', resume: (p) => `timestamptz 'epoch' + ${p}::float8 * interval '1 microsecond'` },
  updated: { column: 'coalesce(w.live_updated_at, w.published_at)', resume: (p) => `timestamptz 'epoch' + ${p}::float8 * interval '1 microsecond'` },
  popular: { column: 'w.player_count', resume: (p) => `${p}::integer` },
};

/** The live card of every published world: the live name, tags and cover, its author and player count. */
export const CARD_SELECT = `select w.id, coalesce(w.live_name, w.name) as name, coalesce(w.live_description, w.description) as description,
          coalesce(w.live_tags, w.tags) as tags, coalesce(w.live_language, w.language) as language, w.published_at,
          coalesce(w.live_updated_at, w.published_at) as updated_at, a.display_name as author, w.live_cover_asset_id as cover,
          w.player_count as plays
     from worlds w join accounts a on a.id = w.owner_id`;

export type LibraryQuery = z.infer<typeof libraryQuery>;

/** One statement and its parameters. */
export interface Statement {
  text: string;
  params: unknown[];
}

/**
 * The SQL of one library page (pageSize + 1 rows, to tell whether more follow) and the sort it applied.
 * With a search, two steps: the page's ids and sort keys from `worlds` alone
 * (filters, search, cursor, order, limit), then the cards of those rows only (author, player
 * count): a search ranks its hits without joining every hit to its author first (at 100,000
 * worlds: 1.4× faster for a word in 619 worlds, 1.6× for a CJK word in 3,309). Not a named
 * (prepared) statement: PostgreSQL's
 * generic plan for it evaluates `to_tsquery($n)` once per hit instead of once (93 ms instead of
 * 10 ms for the CJK word), and its custom plans are planned on every execution anyway.
 * A one-word search by relevance also gets `oneWord`: a statement to run first, whose rows are
 * the page when it returns pageSize + 1 of them (oneWordStatement; libraryPage runs both).
 */
export function libraryPageQuery(q: LibraryQuery): Statement & { sort: LibrarySort; oneWord?: Statement } {
  const params: unknown[] = [];
  const p = pageParts(q, params);
  const { where, key, sort, column, limit } = p;
  const [fields, from] = CARD_SELECT.split(' from worlds w ') as [string, string];
  if (column && !p.search) {
    // A sort by a column without a search reads its index in order and stops after the page: one step.
    const text = `${fields.replace('select ', () => `select ${key}::text as k, `)} from worlds w ${from} where ${where.join(' and ')}
      order by ${column} desc nulls last, w.id desc ${limit}`;
    return { text, params, sort };
  }
  // The keys of the time sorts follow their column exactly (µs), so the cards keep the page's order by key.
  const page = `select w.id, ${key} as k from worlds w where ${where.join(' and ')}
      order by ${column ?? 'k'} desc nulls last, w.id desc ${limit}`;
  const text = `${fields.replace('select ', 'select p.k::text as k, ')} from (${page}) p join worlds w on w.id = p.id ${from}
      order by p.k desc nulls last, p.id desc`;
  return { text, params, sort, oneWord: sort === 'relevance' && p.search?.oneWord ? oneWordStatement(q) : undefined };
}

/**
 * The conditions, sort key and limit of a page, their parameters pushed onto `params`. Without
 * `withRank` a relevance page has no key (nor its parameter: PostgreSQL refuses an unused one).
 */
function pageParts(q: LibraryQuery, params: unknown[], withRank = true) {
  const where = [LIVE_WHERE];
  /** The tag and language filters. */
  const filters: string[] = [];
  const search = q.q ? librarySearch(q.q, params) : undefined;
  if (search) where.push(search.where);
  if (q.tag) {
    params.push(q.tag);
    filters.push(`coalesce(w.live_tags, w.tags) @> array[$${params.length}::text]`);
  }
  if (q.language) {
    params.push(q.language);
    filters.push(`coalesce(w.live_language, w.language) = $${params.length}`);
  }
  where.push(...filters);
  const sort: LibrarySort = q.q ? (q.sort ?? 'relevance') : q.sort && q.sort !== 'relevance' ? q.sort : 'new';
  const key = sort !== 'relevance' ? SORT_KEY[sort] : withRank ? `(${search!.rank()} * 1000000)::bigint` : '';
  const ordered = SORT_COLUMN[sort];
  let cursor: { key: string; id: string } | undefined;
  if (q.cursor) {
    const c = decodeCursor(q.cursor);
    params.push(c.key, c.id);
    cursor = { key: `$${params.length - 1}::bigint`, id: `$${params.length}::text` };
    if (ordered) where.push(`(${ordered.column}, w.id) < (${ordered.resume(`$${params.length - 1}`)}, ${cursor.id})`);
    else if (key) where.push(`(${key}, w.id) < (${cursor.key}, ${cursor.id})`);
  }
  params.push(q.pageSize + 1);
  return { where, filters, search, sort, key, column: ordered?.column, cursor, rows: `$${params.length}`, limit: `limit $${params.length}` };
}

/**
 * The page of a one-word search by relevance (issue 32): its hits in rank order from migration
 * 098's index of each world's words and their ranks (world_terms: the same key as the search's
 * rank), read in order up to the page's end, whatever the word's frequency (a word in 20 % of
 * 100,000 worlds was ranked hit by hit, 326 ms; now an index range of a page). A Latin word is
 * also found inside longer words (the search's pg_trgm condition): those hits whose name contains
 * it rank at the name's bonus alone and are read through the trigram index of the live names; the
 * others rank 0, below every hit that holds the word. So when this statement fills the page
 * (pageSize + 1 rows), it is the page that ranking every hit gives; otherwise (the end of the
 * hits, or PostgreSQL parses the query otherwise than as this word: `guard`) the ranking
 * statement answers.
 */
function oneWordStatement(q: LibraryQuery): Statement {
  const params: unknown[] = [];
  // Only a Latin word's hits inside longer words are ranked here (the rank's key and parameter).
  const partial = !!librarySearch(q.q!, []).oneWord?.partial;
  const { search, filters, key, cursor, rows } = pageParts(q, params, partial);
  const word = search!.oneWord!;
  const filtered = filters.map((f) => ` and ${f}`).join('');
  params.push(word.lexeme);
  const terms = `select t.world_id as id, t.k from world_terms t join worlds w on w.id = t.world_id
      where t.lexeme = $${params.length} and ${LIVE_WHERE}${filtered}${cursor ? ` and (t.k, t.world_id) < (${cursor.key}, ${cursor.id})` : ''}
      order by t.k desc, t.world_id desc limit ${rows}`;
  let steps = `(${terms})`;
  if (partial) {
    params.push(containsPattern(q.q!));
    const named = `select w.id, ${key} as k from worlds w
      where ${LIVE_WHERE} and lower(coalesce(w.live_name, w.name)) like $${params.length} and not (w.search_vector @@ ${word.tsquery})
        and ${search!.where}${filtered}${cursor ? ` and (${key}, w.id) < (${cursor.key}, ${cursor.id})` : ''}
      order by k desc, w.id desc limit ${rows}`;
    steps += ` union all (${named})`;
  }
  const page = `select id, k from (${steps}) f where ${word.guard()} order by k desc, id desc limit ${rows}`;
  const [fields, from] = CARD_SELECT.split(' from worlds w ') as [string, string];
  const text = `${fields.replace('select ', 'select p.k::text as k, ')} from (${page}) p join worlds w on w.id = p.id ${from}
      order by p.k desc, p.id desc`;
  return { text, params };
}

/** Runs a library page's statements (libraryPageQuery): the one-word statement first when there is one. */
export async function libraryPage<R extends Record<string, unknown> & { k: string; id: string }>(db: Queryable, q: LibraryQuery): Promise<{ rows: R[]; sort: LibrarySort }> {
  const { text, params, sort, oneWord } = libraryPageQuery(q);
  if (oneWord) {
    const { rows } = await db.query<R>(oneWord.text, oneWord.params);
    if (rows.length > q.pageSize) return { rows, sort };
  }
  return { rows: (await db.query<R>(text, params)).rows, sort };
}

/**
 * Public browsing (GET /api/library): published worlds only, from the read pool when one is
 * configured; search (q), tag, language, sort and keyset pagination (cursor → nextCursor).
 * Also the tags in use (GET /api/library/tags) and a player's recent sessions (GET /api/me/sessions).
 */
export async function libraryRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/api/library', async (request) => {
    const q = parseWith(libraryQuery, request.query, 'query');
    const { rows, sort } = await libraryPage<CardRow & Record<string, unknown>>(ctx.db.read, q);
    const page = rows.slice(0, q.pageSize);
    const last = page[page.length - 1];
    const hasMore = rows.length > q.pageSize && !!last;
    return { worlds: page.map(cardView), sort, pageSize: q.pageSize, hasMore, nextCursor: hasMore ? encodeCursor({ key: last.k, id: last.id }) : null };
  });

  /** What the home and world pages tell a newcomer: whether the platform's provider plays on credits, whether guests may try a world, the demos. */
  app.get('/api/platform', async () => platformInfo(ctx));

  /** Tags of published worlds, most used first (the library's tag filter). */
  app.get('/api/library/tags', async () => {
    const { rows } = await ctx.db.read.query<{ tag: string; n: number }>(
      `select t as tag, count(*)::int as n from worlds w, unnest(coalesce(w.live_tags, w.tags)) t
        where ${LIVE_WHERE} group by t order by n desc, t limit 60`,
    );
    return { tags: rows.map((r) => ({ tag: r.tag, count: r.n })) };
  });

  /** The signed-in player's recent sessions across worlds ("continue playing"), newest first. */
  app.get('/api/me/sessions', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    return { sessions: await recentSessions(ctx, auth.account.id) };
  });

  /**
   * Everything the home page shows, in one read (its first screen waits for one round trip): six
   * most played and six newest worlds, whether the platform's provider plays on credits and, for a
   * signed-in player, their recent sessions and whether they connected their own AI provider.
   */
  app.get('/api/home', async (request, reply) => {
    const auth = await authenticate(ctx, request, reply);
    reply.header('cache-control', auth ? 'private, no-store' : 'no-cache');
    const cards = async (sort: LibrarySort) => {
      const { text, params } = libraryPageQuery({ sort, pageSize: HOME_CARDS });
      const { rows } = await ctx.db.read.query<CardRow & Record<string, unknown>>(text, params);
      return rows.slice(0, HOME_CARDS).map(cardView);
    };
    const [popular, newest, recent, connection] = await Promise.all([
      cards('popular'),
      cards('new'),
      auth ? recentSessions(ctx, auth.account.id) : null,
      auth ? privateConnection(ctx, auth.account.id) : null,
    ]);
    return {
      popular,
      newest,
      platform: platformInfo(ctx),
      recent,
      hasConnection: auth ? !!connection : null,
    };
  });
}

/**
 * The platform as a newcomer meets it (issue 30 E): whether its provider plays on credits, whether
 * a guest may play a published world's preview without an account (guest turns allowed and the
 * platform's provider on: conversations/preview.ts), and the partner games whose landing page it
 * serves (`/<slug>`, partners/landing.ts: the demo partner in local mode).
 */
export function platformInfo(ctx: AppContext) {
  return {
    officialAvailable: !!ctx.config.ai.official,
    welcomeCredits: ctx.config.ai.official ? ctx.config.welcomeCredits : 0,
    guestPreview: ctx.config.guestPreviewTurnsPerHour > 0 && !!ctx.config.ai.official,
    /** Turns an hour a guest may play (per address), when the guest preview is on. */
    guestTurnsPerHour: ctx.config.guestPreviewTurnsPerHour > 0 && ctx.config.ai.official ? ctx.config.guestPreviewTurnsPerHour : 0,
    /**
     * Where mail goes when it stays on this machine (the local outbox, the embedded default's
     * transport): the pages that send mail say so, linking the outbox page when it is served
     * (not in production mode). Null when mail is really sent (SMTP, SES).
     */
    mailOutbox: ctx.config.mail.transport === 'outbox' ? { page: ctx.config.env === 'production' ? null : '/dev/outbox' } : null,
    partners: [...ctx.partners.registry.values()].filter((p) => p.enabled && /^[a-z0-9][a-z0-9-]{0,62}$/.test(p.slug)).map((p) => p.slug),
  };
}

/** Cards per row of the home page (most played, newest). */
const HOME_CARDS = 6;

/** An account's most recent session in each world it played (12 worlds at most), newest first; rooms and group scenes are not among them (they open on their own pages). */
async function recentSessions(ctx: AppContext, accountId: string) {
  const { rows } = await ctx.db.primary.query<{
    id: string;
    world_id: string;
    title: string;
    message_count: number;
    updated_at: Date;
    name: string;
    cover: string | null;
  }>(
    `select distinct on (s.world_id) s.id, s.world_id, s.title, s.message_count, s.updated_at,
            case when w.owner_id = $1 then w.name else coalesce(w.live_name, w.name) end as name,
            case when w.owner_id = $1 then w.cover_asset_id else w.live_cover_asset_id end as cover
       from chat_sessions s join worlds w on w.id = s.world_id
      where s.account_id = $1 and (w.status = 'published' or w.owner_id = $1)
        and not exists (select 1 from chat_rooms r where r.session_id = s.id)
        and not exists (select 1 from chat_groups g where g.session_id = s.id)
      order by s.world_id, s.updated_at desc`,
    [accountId],
  );
  rows.sort((a, b) => b.updated_at.getTime() - a.updated_at.getTime());
  return rows.slice(0, 12).map((r) => ({
    id: r.id,
    worldId: r.world_id,
    worldName: r.name,
    title: r.title,
    messageCount: r.message_count,
    updatedAt: r.updated_at.toISOString(),
    coverUrl: r.cover ? assetPath(r.world_id, r.cover) : null,
  }));
}
