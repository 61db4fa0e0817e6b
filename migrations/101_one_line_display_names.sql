-- Display names are one line of visible text (issue 43, point 10). The routes now clean every new
-- name (@yumina/http oneLineText): each line break or tab becomes a space, every other control
-- character (C0, DEL, C1, the bidirectional embeddings, overrides and isolates) is removed, runs of
-- spaces become one and the ends are trimmed. This cleans the names stored before, the same way:
-- accounts' display names, personas' names and pending sign-ups' names. A name left empty becomes
-- "Player" (what partners' tokens show for a nameless account). Running it again changes nothing.
create or replace function pg_temp.one_line(name text) returns text language sql immutable as $$
  select coalesce(nullif(btrim(regexp_replace(
    regexp_replace(regexp_replace(name, '[\t\n\v\f\r\u0085\u2028\u2029]', ' ', 'g'), '[\x01-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]', '', 'g'),
    ' {2,}', ' ', 'g')), ''), 'Player')
$$;

update accounts set display_name = pg_temp.one_line(display_name) where display_name <> pg_temp.one_line(display_name);
update personas set name = pg_temp.one_line(name) where name <> pg_temp.one_line(name);
update pending_signups set display_name = pg_temp.one_line(display_name) where display_name <> pg_temp.one_line(display_name);

drop function pg_temp.one_line(text);
