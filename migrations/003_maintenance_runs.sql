-- One row per run of a scheduled maintenance job: which period, which replica, how it ended.
create table maintenance_runs (
  id bigint generated always as identity primary key,
  job text not null,
  period_start timestamptz not null,
  replica_id text not null,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  outcome text,
  detail text
);
create index maintenance_runs_job_idx on maintenance_runs (job, period_start);
