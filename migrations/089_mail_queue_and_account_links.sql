-- Mail and the links it carries (issue 35, points 1 to 3).
--
-- mail_queue: every message the platform sends (packages/mail). A request only inserts a row, in
-- its own transaction; each replica's worker claims due rows (FOR UPDATE SKIP LOCKED), sends them,
-- and retries temporary failures with backoff. The content holds links with tokens, so it is
-- stored sealed (AES-256-GCM under a key derived from SECRETS_KEY) and dropped once the message is
-- sent or given up. account_id is only for logs: no foreign key, a notice may outlive its account.
create table mail_queue (
  id text primary key,
  kind text not null,
  account_id text,
  payload bytea,
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  locked_until timestamptz,
  not_after timestamptz,
  last_error text,
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  check (status <> 'queued' or payload is not null)
);
create index mail_queue_due_idx on mail_queue (next_attempt_at) where status = 'queued';

-- Single-use links sent by mail: e-mail verification (24 h), a change of address (24 h) and a
-- password reset (30 min). A link carries `<id>.<secret>`; only the SHA-256 of the secret is
-- stored, compared in constant time after the row is found by its id. `email` is the address
-- the link was sent to (for a change, the new address).
create table account_links (
  id text primary key,
  account_id text not null references accounts (id) on delete cascade,
  purpose text not null check (purpose in ('verify_email', 'change_email', 'reset_password')),
  email text not null,
  secret_hash bytea not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz
);
create index account_links_account_idx on account_links (account_id, purpose) where used_at is null;
