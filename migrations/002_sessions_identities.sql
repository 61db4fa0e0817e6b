-- E-mail + password sign-in. One password credential per e-mail address.
create table password_credentials (
  account_id text primary key references accounts (id) on delete cascade,
  email text not null,
  password_hash text not null,
  updated_at timestamptz not null default now()
);
create unique index password_credentials_email_key on password_credentials (lower(email));

-- Login sessions. `id` is the public, stable session id (the identity token's sid); the cookie
-- carries a separate secret whose SHA-256 is stored, so a database read never yields a usable cookie.
create table login_sessions (
  id text primary key,
  account_id text not null references accounts (id) on delete cascade,
  token_hash bytea not null unique,
  created_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  expires_at timestamptz not null,
  ended_at timestamptz
);
create index login_sessions_account_idx on login_sessions (account_id);
create index login_sessions_expiry_idx on login_sessions (expires_at) where ended_at is null;

-- Identities from completed OAuth flows only: the provider's subject, never an e-mail match.
create table oauth_identities (
  provider text not null check (provider in ('google', 'discord', 'twitter')),
  subject text not null,
  account_id text not null references accounts (id) on delete cascade,
  linked_at timestamptz not null default now(),
  primary key (provider, subject),
  unique (account_id, provider)
);

-- Pending OAuth flows (state, PKCE verifier, nonce), short-lived.
create table oauth_flows (
  state text primary key,
  provider text not null,
  code_verifier text not null,
  nonce text not null,
  link_account_id text references accounts (id) on delete cascade,
  return_to text not null default '/',
  created_at timestamptz not null default now()
);

-- A private OpenAI-compatible connection per account. The key is AES-256-GCM ciphertext under
-- the server key identified by key_id (a fingerprint of SECRETS_KEY).
create table ai_connections (
  account_id text primary key references accounts (id) on delete cascade,
  base_url text not null,
  default_model text not null,
  key_ciphertext bytea,
  key_iv bytea,
  key_tag bytea,
  key_id text,
  key_last4 text,
  private_enabled boolean not null default true,
  updated_at timestamptz not null default now()
);

create table personas (
  id text primary key,
  account_id text not null references accounts (id) on delete cascade,
  name text not null check (length(btrim(name)) between 1 and 100),
  description text not null default '' check (length(description) <= 5000),
  avatar text check (avatar is null or avatar ~ '^(https://|asset://)'),
  is_active boolean not null default false,
  created_at timestamptz not null default now()
);
create index personas_account_idx on personas (account_id);
create unique index personas_one_active on personas (account_id) where is_active;
