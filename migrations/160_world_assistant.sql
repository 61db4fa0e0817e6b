-- Issue 48: the studio assistant (docs/STUDIO-ASSISTANT.md). One row per round of an author's
-- conversation with the assistant about one world: the author's request (or the reason a card was
-- rejected), the assistant's answer, and the change card it proposed (checked operations and their
-- readable diff). An approved card keeps the definitions before and after it: the snapshots the
-- author rolls back to. Nothing here is ever published by the assistant.
create table world_assistant_rounds (
  id text primary key,
  world_id text not null references worlds (id) on delete cascade,
  account_id text not null references accounts (id) on delete cascade,
  kind text not null check (kind in ('request', 'feedback', 'rollback')),
  request text not null,
  reply text not null default '',
  status text not null check (status in ('running', 'proposed', 'approved', 'rejected', 'superseded', 'answered', 'stopped', 'failed')),
  operations jsonb not null default '[]',
  changes jsonb not null default '[]',
  steps jsonb not null default '[]',
  model text,
  base_revision integer not null,
  applied_revision integer,
  before_definition text,
  after_definition text,
  reason text,
  error text,
  created_at timestamptz not null default clock_timestamp(),
  decided_at timestamptz
);
create index world_assistant_rounds_world_idx on world_assistant_rounds (world_id, account_id, created_at);
-- at most one round runs per world at a time
create unique index world_assistant_rounds_running_idx on world_assistant_rounds (world_id) where status = 'running';
