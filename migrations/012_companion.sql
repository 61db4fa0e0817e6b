-- The adventure companion's notebook (seed 001 §2.1): one per account, removed with the account.
-- The stored JSON stays within 64 KiB (jsonb text form); the server trims old turns first.
-- The same statement runs again in the post-listen provisioning step (containers/api/src/companion/table.ts),
-- so it only ever creates: no existing table is altered and no row rewritten.
create table if not exists game_npc_companion_memory (
  account_id text primary key references accounts (id) on delete cascade,
  notebook jsonb not null,
  revision integer not null default 0 check (revision >= 0),
  updated_at timestamptz not null default now(),
  constraint game_npc_companion_memory_size check (octet_length(notebook::text) <= 65536)
);
