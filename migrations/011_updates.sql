-- Update records of a work (seed 001 §2.3): standalone notes and corrections shown in its history.
-- created_at is the record's timestamp and is never changed by an edit; is_major is fixed at creation.
-- A record held for review (status 'held') stays out of published history until it is released.
create table world_updates (
  id text primary key,
  world_id text not null references worlds (id) on delete cascade,
  author_id text not null references accounts (id) on delete cascade,
  title text not null check (length(btrim(title)) between 1 and 200),
  content text not null default '' check (length(content) <= 10000),
  is_major boolean not null default false,
  status text not null default 'published' check (status in ('published', 'held')),
  created_at timestamptz not null default now()
);
create index world_updates_world_idx on world_updates (world_id, created_at desc);

-- Language variants of one work: every variant names the original; the original names nobody.
-- History may mix them; each record keeps its own source world id.
create table world_variants (
  world_id text primary key references worlds (id) on delete cascade,
  original_id text not null references worlds (id) on delete cascade,
  check (world_id <> original_id)
);
create index world_variants_original_idx on world_variants (original_id);

-- Players who favorited a world; they are the ones a notifying update reaches.
create table world_favorites (
  account_id text not null references accounts (id) on delete cascade,
  world_id text not null references worlds (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (account_id, world_id)
);
create index world_favorites_world_idx on world_favorites (world_id);

-- A player's inbox. The snapshot is the record as it was sent; editing the record never touches it.
create table update_notifications (
  id text primary key,
  account_id text not null references accounts (id) on delete cascade,
  world_id text not null references worlds (id) on delete cascade,
  update_id text references world_updates (id) on delete set null,
  snapshot jsonb not null,
  created_at timestamptz not null default now(),
  read_at timestamptz
);
create index update_notifications_account_idx on update_notifications (account_id, created_at desc);
