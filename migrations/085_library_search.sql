-- Library search with an index (issue 24). Every world carries what the library searches, kept
-- current by triggers: search_vector (full text, 'simple' configuration so no language's stemming
-- is imposed on another's; the name weighs most, then tags and author, then the description)
-- for websearch_to_tsquery, and search_document (the same text lowercased in one line) for
-- pg_trgm: partial words, infixes and CJK, which has no spaces between words. Both come from the
-- live version (what the library shows) and the owner's display name (the card's author). A
-- trigger and not a generated column, because the author lives in another table.
create extension if not exists pg_trgm;

alter table worlds
  add column search_document text not null default '',
  add column search_vector tsvector not null default ''::tsvector;

-- CJK is written without spaces, so the parser sees a whole run as one word. Its characters and
-- overlapping pairs of characters go into the vector too, so any part of a CJK text is found by
-- the full-text index (a query's pairs, all present: library-search.ts), where trigrams cannot
-- help a query of one or two characters.
create function cjk_grams(doc text) returns text language plpgsql immutable as $$
declare
  run text;
  grams text[] := '{}';
begin
  for run in select m[1] from regexp_matches(doc, '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+)', 'g') m loop
    for i in 1..length(run) loop
      grams := grams || substr(run, i, 1);
      if i < length(run) then
        grams := grams || substr(run, i, 2);
      end if;
    end loop;
  end loop;
  return array_to_string(grams, ' ');
end $$;

create function world_search_refresh() returns trigger language plpgsql as $$
declare
  author text;
  tag_text text := array_to_string(coalesce(new.live_tags, new.tags), ' ');
  name_text text := coalesce(new.live_name, new.name);
  description_text text := coalesce(new.live_description, new.description);
begin
  select display_name into author from accounts where id = new.owner_id;
  tag_text := tag_text || ' ' || coalesce(author, '');
  new.search_document := lower(concat_ws(' ', name_text, tag_text, description_text));
  new.search_vector := setweight(to_tsvector('simple', name_text || ' ' || cjk_grams(name_text)), 'A')
                    || setweight(to_tsvector('simple', tag_text || ' ' || cjk_grams(tag_text)), 'B')
                    || setweight(to_tsvector('simple', description_text || ' ' || cjk_grams(description_text)), 'C');
  return new;
end $$;
create trigger worlds_search_refresh before insert or update of name, description, tags, live_name,
  live_description, live_tags, owner_id on worlds for each row execute function world_search_refresh();

-- A renamed author: their worlds' search text follows (setting owner_id fires the trigger above).
create function world_search_author() returns trigger language plpgsql as $$
begin
  update worlds set owner_id = owner_id where owner_id = new.id;
  return null;
end $$;
create trigger accounts_search_author after update of display_name on accounts for each row
  when (old.display_name is distinct from new.display_name) execute function world_search_author();

update worlds set owner_id = owner_id;

-- Only published worlds are searched, so only they are indexed. fastupdate off: publications are
-- rare and searches many, so a new entry goes into the index at once instead of a pending list
-- that every search would scan until the next vacuum (after a bulk load it cost 10–20× per search).
create index worlds_search_vector_idx on worlds using gin (search_vector) with (fastupdate = off) where status = 'published';
create index worlds_search_trgm_idx on worlds using gin (search_document gin_trgm_ops) with (fastupdate = off) where status = 'published';

-- The tag and language filters, as the library writes them (over the live values).
create index worlds_live_tags_idx on worlds using gin ((coalesce(live_tags, tags))) with (fastupdate = off) where status = 'published';
create index worlds_live_language_idx on worlds ((coalesce(live_language, language))) where status = 'published';

-- The time sorts, in the library's order (keyset pages resume inside these indexes).
create index worlds_library_new_idx on worlds (published_at desc nulls last, id desc) where status = 'published';
create index worlds_library_updated_idx on worlds ((coalesce(live_updated_at, published_at)) desc nulls last, id desc) where status = 'published';
