-- A maintained player count per world (issue 32). The library's `popular` sort and every card's
-- player count read worlds.player_count instead of counting the distinct accounts of a world's
-- sessions on each request (~500 ms for the popular sort at 100,000 worlds; a card's count grew
-- with its world's popularity). world_players holds one row per account that has a session of a
-- world; its primary key makes concurrent first sessions of one account count once, and the row
-- lock of the world's update serialises concurrent first sessions of different accounts.
-- Maintenance repairs any drift (containers/api/src/worlds/player-count.ts).
create table world_players (
  world_id text not null references worlds (id) on delete cascade,
  -- No foreign key to accounts: an account's deletion removes its sessions, whose trigger below
  -- removes these rows and lowers the counts (a cascade from accounts would remove them first,
  -- and the counts would not follow).
  account_id text not null,
  primary key (world_id, account_id)
);

alter table worlds add column player_count integer not null default 0;

insert into world_players (world_id, account_id) select distinct world_id, account_id from chat_sessions;
update worlds w set player_count = p.n
  from (select world_id, count(*)::int as n from world_players group by world_id) p
 where p.world_id = w.id;

-- A player's first session of a world counts them.
create function world_players_session_started() returns trigger language plpgsql as $$
begin
  insert into world_players (world_id, account_id) values (new.world_id, new.account_id) on conflict do nothing;
  if found then
    update worlds set player_count = player_count + 1 where id = new.world_id;
  end if;
  return null;
end $$;
create trigger chat_sessions_player_started after insert on chat_sessions
  for each row execute function world_players_session_started();

-- Their last session's deletion (or their account's) uncounts them.
create function world_players_session_deleted() returns trigger language plpgsql as $$
begin
  delete from world_players p
   where p.world_id = old.world_id and p.account_id = old.account_id
     and not exists (select 1 from chat_sessions s where s.world_id = old.world_id and s.account_id = old.account_id);
  if found then
    update worlds set player_count = greatest(player_count - 1, 0) where id = old.world_id;
  end if;
  return null;
end $$;
create trigger chat_sessions_player_deleted after delete on chat_sessions
  for each row execute function world_players_session_deleted();

-- The popular sort, in the library's order (keyset pages resume inside it, like the time sorts).
create index worlds_library_popular_idx on worlds (player_count desc nulls last, id desc) where status = 'published';
