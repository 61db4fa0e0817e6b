-- Accounts: random text ids, never numeric. A deleted account's id is kept in retired_account_ids
-- so that it is never issued again (partners key players by it).
create table accounts (
  id text primary key check (id ~ '^acc_[A-Za-z0-9_-]{16,}$'),
  email text not null,
  email_verified boolean not null default false,
  username text unique check (username is null or length(username) between 1 and 40),
  display_name text not null check (length(btrim(display_name)) > 0),
  picture text check (picture is null or picture ~ '^https://'),
  is_admin boolean not null default false,
  created_at timestamptz not null default now()
);
create index accounts_email_idx on accounts (lower(email));

create table retired_account_ids (
  id text primary key,
  retired_at timestamptz not null default now()
);

create function retire_account_id() returns trigger language plpgsql as $$
begin
  insert into retired_account_ids (id) values (old.id) on conflict do nothing;
  return old;
end $$;
create trigger accounts_retire_id after delete on accounts for each row execute function retire_account_id();

-- Worlds: the owner is the account that created it; the displayed author name lives in the
-- definition. The definition is stored as the exact JSON text that was validated, so unknown
-- fields (of folders, components, custom UI) round-trip byte for byte; jsonb would reorder keys.
create table worlds (
  id text primary key,
  owner_id text not null references accounts (id) on delete cascade,
  name text not null,
  description text not null default '',
  tags text[] not null default '{}',
  language text,
  definition text not null,
  status text not null default 'saved' check (status in ('saved', 'unpublished', 'published', 'held')),
  revision integer not null default 1,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  published_at timestamptz
);
create index worlds_owner_idx on worlds (owner_id, updated_at desc);
create index worlds_published_idx on worlds (published_at desc) where status = 'published';
create index worlds_tags_idx on worlds using gin (tags);
