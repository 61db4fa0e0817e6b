-- Issue 43, point 9: what a world's interface chooses for the player (setModel,
-- setPreferredProvider) applies to that world only. The account-wide choice stays in
-- billing_accounts.preference and ai_connections.default_model (the platform's own settings); a
-- row here overrides either for the player's turns and AI calls in one world. A switch to the
-- platform's credits is asked of the player in the platform's own UI before it is stored.
create table world_ai_choices (
  account_id text not null references accounts (id) on delete cascade,
  world_id text not null references worlds (id) on delete cascade,
  provider text check (provider in ('official', 'private')),
  model text check (char_length(model) between 1 and 200),
  updated_at timestamptz not null default now(),
  primary key (account_id, world_id)
);
