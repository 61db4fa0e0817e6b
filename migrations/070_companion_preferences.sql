-- The adventure companion's preferences (seed 001 §3.3.4, §3.3.5), one row per account, kept apart
-- from the notebook (which the player may clear) and from game saves. Occasional visits and
-- proactive comments are two separate switches; a missing row means the defaults (visits on,
-- proactive comments off).
create table game_companion_preferences (
  account_id text primary key references accounts (id) on delete cascade,
  occasional_visits boolean not null default true,
  proactive_comments boolean not null default false,
  updated_at timestamptz not null default now()
);
