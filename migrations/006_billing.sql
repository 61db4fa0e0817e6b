-- Billing state: a plan, a platform credit balance and a provider preference per account.
create table billing_accounts (
  account_id text primary key references accounts (id) on delete cascade,
  plan text not null default 'free' check (plan in ('free', 'plus', 'pro')),
  credits bigint not null default 0 check (credits >= 0),
  preference text not null default 'private' check (preference in ('official', 'private', 'mix')),
  updated_at timestamptz not null default now()
);

-- A reservation holds credits for one official-key call until it is settled (charged the actual
-- cost, the rest returned) or released (nothing owed). Each reservation is settled at most once.
create table credit_reservations (
  id text primary key,
  account_id text not null references accounts (id) on delete cascade,
  amount bigint not null check (amount > 0),
  model text not null,
  purpose text not null,
  status text not null default 'reserved' check (status in ('reserved', 'settled', 'released')),
  charged bigint,
  created_at timestamptz not null default now(),
  settled_at timestamptz
);
create index credit_reservations_open_idx on credit_reservations (created_at) where status = 'reserved';

-- Every change of a balance has a ledger row; a reservation's charge appears once (unique).
create table credit_ledger (
  id bigint generated always as identity primary key,
  account_id text not null references accounts (id) on delete cascade,
  kind text not null check (kind in ('grant', 'charge')),
  amount bigint not null,
  balance_after bigint not null,
  reservation_id text unique references credit_reservations (id) on delete cascade,
  granted_by text references accounts (id) on delete set null,
  detail text not null default '',
  created_at timestamptz not null default now()
);
create index credit_ledger_account_idx on credit_ledger (account_id, created_at desc);

-- One row per successful AI call, on either billing source.
create table usage_ledger (
  id bigint generated always as identity primary key,
  account_id text not null references accounts (id) on delete cascade,
  model text not null,
  requested_model text not null,
  provider_model text,
  tokens_in integer not null,
  tokens_out integer not null,
  estimated boolean not null default false,
  partial boolean not null default false,
  billing_source text not null check (billing_source in ('official', 'private')),
  purpose text not null,
  reservation_id text references credit_reservations (id) on delete set null,
  created_at timestamptz not null default now()
);
create index usage_ledger_account_idx on usage_ledger (account_id, created_at desc);

-- Models an account pinned or used recently (the model catalogue).
create table model_pins (
  account_id text not null references accounts (id) on delete cascade,
  model_id text not null,
  pinned_at timestamptz not null default now(),
  primary key (account_id, model_id)
);
