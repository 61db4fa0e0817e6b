-- Conversations with a world: sessions per world and account, ordered messages with the world
-- state after each, swipes, checkpoints, and world-scoped key/value storage per account.
create table chat_sessions (
  id text primary key,
  world_id text not null references worlds (id) on delete cascade,
  account_id text not null references accounts (id) on delete cascade,
  title text not null default '',
  seed text not null,
  state text not null,
  -- The state before the first message (after session-start rules), for reverting and regenerating.
  initial_state text not null,
  summary text,
  message_count integer not null default 0,
  branched_from text references chat_sessions (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index chat_sessions_owner_idx on chat_sessions (account_id, world_id, updated_at desc);

create table chat_messages (
  id text primary key,
  session_id text not null references chat_sessions (id) on delete cascade,
  position integer not null,
  role text not null check (role in ('user', 'assistant', 'system')),
  content text not null,
  raw_content text,
  status text not null default 'complete' check (status in ('complete', 'streaming', 'failed')),
  error_message text,
  state_changes text not null default '[]',
  state_snapshot text,
  swipes text not null default '[]',
  active_swipe_index integer not null default 0,
  model text,
  token_count integer,
  generation_time_ms integer,
  compacted boolean not null default false,
  attachments text not null default '[]',
  created_at timestamptz not null default now(),
  unique (session_id, position)
);

create table chat_checkpoints (
  id text primary key,
  session_id text not null references chat_sessions (id) on delete cascade,
  name text not null,
  message_count integer not null,
  state text not null,
  created_at timestamptz not null default now()
);
create index chat_checkpoints_session_idx on chat_checkpoints (session_id, created_at);

create table world_storage (
  account_id text not null references accounts (id) on delete cascade,
  world_id text not null references worlds (id) on delete cascade,
  key text not null,
  value text not null,
  updated_at timestamptz not null default now(),
  primary key (account_id, world_id, key)
);
