-- Rooms (issue 45) on one participant model of a session (docs/ROOMS.md): the humans of a room now,
-- the characters of a group scene next. A session without participants is a single player's: its
-- owner (chat_sessions.account_id) plays it alone, as before. A room's owner is its host and pays.

create table session_participants (
  id text primary key,
  session_id text not null references chat_sessions (id) on delete cascade,
  -- 'human': an account (host, player or spectator); 'character': a character of a group scene.
  kind text not null check (kind in ('human', 'character')),
  account_id text references accounts (id) on delete cascade,
  role text not null check (role in ('host', 'player', 'spectator', 'character')),
  -- Order in the player list (and in turn-based speech).
  position integer not null default 0,
  joined_at timestamptz not null default now(),
  -- Set when the member left or was removed; a barred member may not come back through any link.
  left_at timestamptz,
  barred boolean not null default false,
  check ((kind = 'human') = (account_id is not null)),
  check ((kind = 'character') = (role = 'character'))
);
create unique index session_participants_account_idx on session_participants (session_id, account_id) where account_id is not null;
create index session_participants_member_idx on session_participants (account_id) where left_at is null;

-- A room: a session several accounts play together. Its round state is derived (docs/ROOMS.md):
-- collecting while room_queue holds messages, replying while the session's turn lock is held.
create table chat_rooms (
  session_id text primary key references chat_sessions (id) on delete cascade,
  trigger_mode text not null check (trigger_mode in ('manual', 'timer', 'round', 'instant')),
  timer_seconds integer not null default 30 check (timer_seconds between 2 and 600),
  speech_mode text not null check (speech_mode in ('free', 'turns')),
  -- Turn-based speech: the participant who may write now (null: nobody until the host passes it).
  turn_participant_id text references session_participants (id) on delete set null,
  -- Timer mode: when the collected messages go to the AI.
  collect_until timestamptz,
  max_players integer not null default 8,
  max_spectators integer not null default 50,
  ended_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- The round's messages, queued until the AI answers them together; moved into chat_messages (with
-- their author) in the statement that starts the reply.
create table room_queue (
  id text primary key,
  session_id text not null references chat_sessions (id) on delete cascade,
  participant_id text not null references session_participants (id) on delete cascade,
  author_name text not null,
  content text not null,
  created_at timestamptz not null default now()
);
create index room_queue_session_idx on room_queue (session_id, created_at, id);

-- Invite links: the token is shown once to the host and kept here as its SHA-256.
create table room_invites (
  id text primary key,
  session_id text not null references chat_sessions (id) on delete cascade,
  token_hash bytea not null unique,
  role text not null check (role in ('player', 'spectator')),
  expires_at timestamptz not null,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index room_invites_session_idx on room_invites (session_id, created_at desc);

-- Who wrote a message: a room member's messages carry their participant and the name they wrote
-- under (persona-aware, as {{user}}); null on a single player's session.
alter table chat_messages add column participant_id text references session_participants (id) on delete set null;
alter table chat_messages add column author_name text;

-- The author's switch: whether players may open rooms on this world (the samples allow them).
alter table worlds add column rooms_allowed boolean not null default false;
update worlds set rooms_allowed = true where owner_id = 'acc_yumina_samples_0001';

-- A room's version: every change of the room's row or of its queue raises it (the triggers below),
-- and every `room` event carries the version it was read at: a member applies only a newer one, so
-- events of concurrent changes that arrive out of order never leave a stale queue on a page.
alter table chat_rooms add column version bigint not null default 0;
create function chat_rooms_next_version() returns trigger language plpgsql as $$
begin
  new.version := old.version + 1;
  return new;
end $$;
create trigger chat_rooms_versioned before update on chat_rooms for each row execute function chat_rooms_next_version();
create function room_queue_changed() returns trigger language plpgsql as $$
begin
  update chat_rooms set updated_at = now() where session_id = coalesce(new.session_id, old.session_id);
  return null;
end $$;
create trigger room_queue_changed after insert or delete on room_queue for each row execute function room_queue_changed();
