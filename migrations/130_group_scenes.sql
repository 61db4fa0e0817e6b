-- Issue 46: group scenes, several characters in one session, on the participant model of rooms
-- (migration 110, docs/GROUPS.md). A character of a scene is a session_participants row of kind
-- 'character' with the world its card is (world_id); the scene's own world (chat_sessions.world_id)
-- holds the shared state: a group world, or the first character's world. Each reply is written by
-- one character: chat_messages.participant_id and author_name name it.
alter table session_participants
  add column world_id text references worlds (id) on delete set null,
  add column muted boolean not null default false,
  -- How likely the character speaks up unprompted in the natural mode (the card's talkativeness).
  add column talkativeness real not null default 0.5 check (talkativeness between 0 and 1),
  -- The character's name as the scene shows it (a human's comes from the account or persona).
  add column name text check (char_length(name) <= 200);

create table chat_groups (
  session_id text primary key references chat_sessions (id) on delete cascade,
  -- Who speaks after a message: 'natural' (a character named in it, else by talkativeness),
  -- 'in-turn' (list order, one per message), 'choose' (the player picks), 'everyone'.
  reply_mode text not null default 'natural' check (reply_mode in ('natural', 'in-turn', 'choose', 'everyone')),
  -- What each reply's prompt holds of the other characters: 'swap' (only the speaker's card),
  -- 'join' (the others' descriptions too).
  card_mode text not null default 'swap' check (card_mode in ('swap', 'join')),
  -- Auto: after the player's message, characters carry on among themselves for up to this many replies.
  auto_replies integer not null default 0 check (auto_replies between 0 and 20),
  created_at timestamptz not null default now()
);
