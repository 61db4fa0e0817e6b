-- Library search at any word's frequency (issue 32). A search ranks its hits by relevance
-- (library-search.ts: ts_rank plus a bonus when the name contains the query), so a word found in
-- many worlds ranked every hit on each request: 24 / 43 / 326 ms for words in 3 / 8 / 20 % of
-- 100,000 worlds, the most frequent read as a full scan. world_terms holds, for each word of each
-- published world's search vector, the relevance a one-word search for it gives that world, in
-- the library's own sort key (the same expression as the search's, so the same integer): an index
-- in relevance order, read in order, stops after one page whatever the word's frequency.
-- A one-word search (a Latin word or a CJK character or pair) reads it; any other query ranks its
-- hits as before (library.ts libraryPageQuery).
create table world_terms (
  lexeme text not null,
  world_id text not null,
  -- ((ts_rank(search_vector, lexeme) + name contains lexeme ? 1 : 0) * 1000000)::bigint
  k bigint not null
);
create index world_terms_rank_idx on world_terms (lexeme, k desc, world_id desc);
create index world_terms_world_idx on world_terms (world_id);

-- The rank of every word of one world, as library-search.ts ranks a one-word query: ts_rank of the
-- vector for the word, plus 1 when the live name (lowercased) contains it. Words holding a quote
-- or a backslash are left out (no one-word search reads them: library-search.ts oneWord).
create function world_terms_of(text, tsvector, text) returns table (term text, term_world text, term_k bigint)
language sql immutable as $$
  select t.lexeme, $1,
         ((ts_rank($2, ('''' || t.lexeme || '''')::tsquery)
           + case when lower($3) like '%' || replace(replace(t.lexeme, '%', '\%'), '_', '\_') || '%' then 1 else 0 end) * 1000000)::bigint
    from unnest($2) t
   where position('''' in t.lexeme) = 0 and position('\' in t.lexeme) = 0
$$;

-- Kept current with the world: its search vector (the live version and its author, kept by
-- world_search_refresh), its live name (the bonus) and its publication.
create function world_terms_refresh() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then
    delete from world_terms where world_terms.world_id = old.id;
  end if;
  if tg_op <> 'DELETE' and new.status = 'published' then
    insert into world_terms (lexeme, world_id, k)
      select * from world_terms_of(new.id, new.search_vector, coalesce(new.live_name, new.name));
  end if;
  return null;
end $$;
create trigger worlds_terms_inserted after insert on worlds for each row when (new.status = 'published')
  execute function world_terms_refresh();
create trigger worlds_terms_updated after update on worlds for each row
  when (old.search_vector is distinct from new.search_vector or old.status is distinct from new.status
        or coalesce(old.live_name, old.name) is distinct from coalesce(new.live_name, new.name))
  execute function world_terms_refresh();
create trigger worlds_terms_deleted after delete on worlds for each row when (old.status = 'published')
  execute function world_terms_refresh();

insert into world_terms (lexeme, world_id, k)
  select t.* from worlds w, world_terms_of(w.id, w.search_vector, coalesce(w.live_name, w.name)) t
   where w.status = 'published';

-- The names a one-word Latin search finds inside a longer word ("drag" in "Dragon's Keep": the
-- name's bonus without the word in the vector), by trigram.
create index worlds_live_name_trgm_idx on worlds using gin ((lower(coalesce(live_name, name))) gin_trgm_ops)
  with (fastupdate = off) where status = 'published';
