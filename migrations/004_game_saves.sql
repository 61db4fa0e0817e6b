-- Game profiles (adventure progress summary) and saves. A player is an account, or for versus
-- mode a guest id kept in a cookie. Saves are stored as the exact JSON text the game sent, so
-- chunks this platform does not know are kept byte for byte.
create table game_profiles (
  account_id text not null references accounts (id) on delete cascade,
  game text not null,
  progress text not null default '{}',
  revision integer not null default 1,
  updated_at timestamptz not null default now(),
  primary key (account_id, game)
);

create table game_saves (
  player text not null,
  account_id text references accounts (id) on delete cascade,
  game text not null,
  mode text not null check (mode in ('versus', 'adventure')),
  slot text not null default 'main' check (slot in ('main', 'defeated')),
  document text not null,
  revision integer not null default 1,
  updated_at timestamptz not null default now(),
  primary key (player, game, mode, slot),
  check (mode = 'versus' or account_id is not null)
);
create index game_saves_account_idx on game_saves (account_id);
