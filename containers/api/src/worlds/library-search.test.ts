import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@yumina/config';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../../../../tests/support/server.ts';
import { type RunningServer, startServer } from '../server.ts';
import { encodeCursor } from './library.ts';

interface Page {
  worlds: { id: string; name: string; author: string }[];
  sort: string;
  nextCursor: string | null;
}

/** An embedded (PGlite) server on a fresh data folder, as `npm start` runs it. */
async function startEmbeddedServer(): Promise<RunningServer & { stop(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'yumina-search-'));
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'fatal', DATA_DIR: dataDir, SAMPLE_WORLDS: '0' });
  const server = await startServer(config, { web: false });
  return {
    ...server,
    async stop() {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const backends: [string, () => Promise<RunningServer & { stop(): Promise<void> }>][] = [
  ['PGlite (embedded)', startEmbeddedServer],
  ['PostgreSQL', () => startTestServer({}, { redis: false })],
];

for (const [backend, start] of backends) {
  describe(`library search with an index on ${backend} (issue 24)`, () => {
    let server: RunningServer & { stop(): Promise<void> };
    const get = async (query: string): Promise<Page> => {
      const res = await fetch(`${server.url}/api/library?${query}`);
      expect(res.status).toBe(200);
      return (await res.json()) as Page;
    };
    const ids = (page: Page) => page.worlds.map((w) => w.id);
    const search = async (q: string) => ids(await get(`q=${encodeURIComponent(q)}&pageSize=50`));

    beforeAll(async () => {
      server = await start();
      const db = server.ctx.db.primary;
      const accounts: [string, string][] = [
        ['acc_searchauthor000001', 'Mirela'],
        ['acc_searchauthor000002', 'Dragomir'],
        ['acc_searchauthor000003', '山田'],
      ];
      for (const [id, name] of accounts) {
        await db.query(`insert into accounts (id, email, display_name) values ($1, $2, $3)`, [id, `${id}@example.com`, name]);
      }
      const worlds: [string, string, string, string, string[], string | null, string][] = [
        // id, owner, name, description, tags, language, status
        ['wld_keep', 'acc_searchauthor000001', "Dragon's Keep", 'A castle held by an ancient wyrm.', ['fantasy'], 'en', 'published'],
        ['wld_harbour', 'acc_searchauthor000001', 'Harbour Lights', 'A quiet fishing town; rumours of a dragon in the bay.', ['mystery'], 'en', 'published'],
        ['wld_freighter', 'acc_searchauthor000002', 'Star Freighter', 'Trade between the outer moons.', ['scifi'], 'en', 'published'],
        ['wld_legend', 'acc_searchauthor000003', '龍の伝説', '古代の龍が眠る山。', ['ファンタジー'], 'ja', 'published'],
        ['wld_voyager', 'acc_searchauthor000003', '星际旅行者', '一艘飞船在银河中漂流。', ['科幻'], 'zh', 'published'],
        ['wld_village', 'acc_searchauthor000001', '山の村', '伝説を語る老人。', ['民話'], null, 'published'],
        ['wld_draft', 'acc_searchauthor000001', 'Dragon Draft', 'Not published: never found.', ['fantasy'], 'en', 'saved'],
      ];
      for (const [id, owner, name, description, tags, language, status] of worlds) {
        await db.query(
          `insert into worlds (id, owner_id, name, description, tags, language, definition, status, published_at,
                               live_name, live_description, live_tags, live_language, live_definition)
           values ($1, $2, $3, $4, $5, $6, '{}', $7, case when $7 = 'published' then now() end,
                   case when $7 = 'published' then $3 end, case when $7 = 'published' then $4 end,
                   case when $7 = 'published' then $5::text[] end, case when $7 = 'published' then $6 end,
                   case when $7 = 'published' then '{}' end)`,
          [id, owner, name, description, tags, language, status],
        );
      }
      // A published world whose working copy was renamed since: the library searches the live version.
      await db.query(
        `insert into worlds (id, owner_id, name, description, definition, status, published_at, live_name, live_description, live_tags, live_definition)
         values ('wld_meadow', 'acc_searchauthor000001', 'Dragon Working Title', '', '{}', 'published', now(), 'Quiet Meadow', 'Sheep and hills.', '{pastoral}', '{}')`,
      );
    }, 120_000);
    afterAll(async () => server?.stop());

    it('finds Latin words ranked by where they occur, partial words and authors, only in published live versions', async () => {
      // The name outranks the description; the draft and the working title are not found.
      expect(await search('dragon')).toEqual(['wld_keep', 'wld_harbour']);
      expect(await search('DRAGON')).toEqual(['wld_keep', 'wld_harbour']);
      expect((await get('q=dragon')).sort).toBe('relevance');
      // Partial word: pg_trgm finds the infix; the author's name is searched too.
      expect(new Set(await search('drag'))).toEqual(new Set(['wld_keep', 'wld_harbour', 'wld_freighter']));
      expect(await search('dragomir')).toEqual(['wld_freighter']);
      expect(await search('freight')).toEqual(['wld_freighter']);
      // Web search syntax: exclusion and phrases.
      expect(await search('dragon -bay')).toEqual(['wld_keep']);
      expect(await search('"fishing town"')).toEqual(['wld_harbour']);
      expect(await search('meadow')).toEqual(['wld_meadow']);
      expect(await search('working title')).toEqual([]);
      expect(await search('nothing matches this')).toEqual([]);
      // LIKE wildcards in the query are plain characters.
      expect(await search('%')).toEqual([]);
    });

    it('finds CJK text (no spaces between words) by any part of it', async () => {
      expect(await search('龍')).toEqual(['wld_legend']);
      // The name outranks the description in CJK text too.
      expect(await search('伝説')).toEqual(['wld_legend', 'wld_village']);
      expect(await search('眠る山')).toEqual(['wld_legend']);
      expect(await search('银河')).toEqual(['wld_voyager']);
      expect(await search('飞船')).toEqual(['wld_voyager']);
      expect(await search('科幻')).toEqual(['wld_voyager']);
      expect(new Set(await search('山田'))).toEqual(new Set(['wld_legend', 'wld_voyager']));
    });

    it('filters by tag and language with a query, pages relevance by cursor, follows a renamed author', async () => {
      expect(await search('dragon')).toHaveLength(2);
      expect(ids(await get('q=dragon&tag=mystery'))).toEqual(['wld_harbour']);
      expect(ids(await get('q=dragon&language=en&sort=new&pageSize=50')).sort()).toEqual(['wld_harbour', 'wld_keep']);
      expect(ids(await get('tag=fantasy'))).toEqual(['wld_keep']);
      expect(ids(await get('language=ja'))).toEqual(['wld_legend']);

      const whole = await search('drag');
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await get(`q=drag&pageSize=1${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...ids(page));
        cursor = page.nextCursor;
      } while (cursor);
      expect(seen).toEqual(whole);

      await server.ctx.db.primary.query(`update accounts set display_name = 'Zoltan' where id = 'acc_searchauthor000002'`);
      expect(await search('zoltan')).toEqual(['wld_freighter']);
      expect(await search('dragomir')).toEqual([]);
      const bad = await fetch(`${server.url}/api/library?q=dragon&cursor=${encodeCursor({ key: 'x', id: 'y' })}`);
      expect(bad.status).toBe(400);
    });

    /**
     * Issue 32: a one-word search reads its hits in rank order from world_terms (migration 098)
     * instead of ranking every hit. Its pages must be the pages of the ranking it replaces: every
     * hit (the word, or the query inside a longer word) ordered by ts_rank plus the name's bonus,
     * then the id, computed here from the words' definition.
     */
    it('a one-word search pages its hits in the same order as ranking every hit, Latin and CJK, and follows edits', async () => {
      const db = server.ctx.db.primary;
      // 36 worlds: the word in names (some twice), tags, descriptions (once or more), inside longer
      // words in names ("Embers", "Remembered": the name's bonus alone) and descriptions ("members":
      // rank 0); CJK worlds with 伝説 in the name or the description; drafts never found.
      const names = ['Ember', 'Ember Ember', 'Embers of Dusk', 'Remembered Shores', 'Quiet Vale', 'Stone Gate', '伝説の森', '古い町'];
      const texts = ['an ember glows', 'ember and ember again', 'the members meet', 'nothing to see', 'ember', '山の伝説。', '伝説と伝説', '静かな夜'];
      for (let i = 0; i < 36; i++) {
        const id = `wld_oneword${String(i).padStart(3, '0')}`;
        const name = names[i % names.length]!;
        const description = texts[(i * 5) % texts.length]!;
        const tags = i % 7 === 0 ? ['ember'] : ['misc'];
        const status = i % 11 === 10 ? 'saved' : 'published';
        await db.query(
          `insert into worlds (id, owner_id, name, description, tags, definition, status, published_at,
                               live_name, live_description, live_tags, live_definition)
           values ($1, 'acc_searchauthor000001', $2, $3, $4, '{}', $5, case when $5 = 'published' then now() end,
                   case when $5 = 'published' then $2 end, case when $5 = 'published' then $3 end,
                   case when $5 = 'published' then $4::text[] end, case when $5 = 'published' then '{}' end)`,
          [id, name, description, tags, status],
        );
      }
      /** Every hit of `q` ranked as library-search.ts defines it (ts_rank + 1 when the name contains the query). */
      const ranked = async (q: string, cjk: boolean) => {
        const tsquery = cjk ? `to_tsquery('simple', $1)` : `websearch_to_tsquery('simple', $1)`;
        const { rows } = await db.query<{ id: string }>(
          `select id from worlds w
            where w.status = 'published' and w.live_definition is not null
              and (w.search_vector @@ ${tsquery} ${cjk ? '' : `or w.search_document ilike '%' || lower($1) || '%'`})
            order by ((ts_rank(w.search_vector, ${tsquery}) + case when lower(coalesce(w.live_name, w.name)) like '%' || lower($1) || '%' then 1 else 0 end) * 1000000)::bigint desc, w.id desc`,
          [q],
        );
        return rows.map((r) => r.id);
      };
      const paged = async (q: string, pageSize: number) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: Page = await get(`q=${encodeURIComponent(q)}&pageSize=${pageSize}${cursor ? `&cursor=${cursor}` : ''}`);
          seen.push(...ids(page));
          cursor = page.nextCursor;
        } while (cursor);
        return seen;
      };
      const check = async (q: string, cjk = false) => {
        const expected = await ranked(q, cjk);
        expect(expected.length).toBeGreaterThan(10);
        expect(await search(q)).toEqual(expected.slice(0, 50));
        for (const pageSize of [1, 3, 7]) expect(await paged(q, pageSize)).toEqual(expected);
        return expected;
      };
      // The word in the name (twice: a higher rank), the bonus alone for "Embers"/"Remembered", rank 0 for "members" last.
      const ember = await check('ember');
      expect(await check('Ember')).toEqual(ember);
      expect(await check('伝説', true)).toContain('wld_oneword006');
      // The words' ranks follow the world: a renamed live name, an unpublished world, a deleted one.
      await db.query(`update worlds set live_name = 'Plain Name' where id = 'wld_oneword000'`);
      await db.query(`update worlds set status = 'saved' where id = 'wld_oneword001'`);
      await db.query(`delete from worlds where id = 'wld_oneword009'`);
      const after = await check('ember');
      expect(after).not.toContain('wld_oneword001');
      expect(after).not.toContain('wld_oneword009');
      expect(after.indexOf('wld_oneword000')).toBeGreaterThan(ember.indexOf('wld_oneword000'));
      const { rows } = await db.query<{ n: number }>(
        `select count(*)::int as n from (
           select lexeme, world_id, k from world_terms
           except all
           select t.* from worlds w, world_terms_of(w.id, w.search_vector, coalesce(w.live_name, w.name)) t where w.status = 'published') d`,
      );
      expect(rows[0]!.n).toBe(0);
    });
  });
}
