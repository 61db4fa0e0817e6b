-- Logins, profile and export (issue 35, point 4).
--
-- Each login remembers the device it was made from (its User-Agent, shortened for display) and the
-- client address and time it was last used (refreshed at most every five minutes), for Settings'
-- list of logins. last_seen_at keeps its job: when the session was last renewed.
alter table login_sessions
  add column user_agent text,
  add column client_address text,
  add column last_active_at timestamptz;
update login_sessions set last_active_at = last_seen_at;
alter table login_sessions alter column last_active_at set default now();
alter table login_sessions alter column last_active_at set not null;

-- A picture uploaded through the asset store (resized, served by the platform) is kept as its
-- platform path; a provider's picture stays an https URL.
alter table accounts drop constraint accounts_picture_check;
alter table accounts add constraint accounts_picture_check
  check (picture is null or picture ~ '^https://' or picture ~ '^/api/account-pictures/acc_[A-Za-z0-9_-]+/[a-f0-9]{32}\.webp$');

-- "Download my data": an archive prepared in the background, kept a week in the object store.
create table account_exports (
  id text primary key,
  account_id text not null references accounts (id) on delete cascade,
  status text not null default 'queued' check (status in ('queued', 'running', 'ready', 'failed')),
  created_at timestamptz not null default now(),
  started_at timestamptz,
  finished_at timestamptz,
  locked_until timestamptz,
  size_bytes bigint,
  error text,
  expires_at timestamptz
);
create index account_exports_account_idx on account_exports (account_id, created_at desc);
create index account_exports_due_idx on account_exports (created_at) where status in ('queued', 'running');
