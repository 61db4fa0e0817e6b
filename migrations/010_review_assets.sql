-- Review workflow (issue 13). A work has a working copy (worlds.definition, what the author
-- saves) and a live version (worlds.live_*, what the library and other readers get). Publishing
-- copies the working copy to the live version, unless the review rule holds it: then a snapshot
-- waits in world_reviews until an administrator approves (copied live) or rejects it (with a
-- reason the author sees). A held edit of a published work leaves the live version serving.
alter table worlds
  add column live_revision integer,
  add column live_definition text,
  add column live_name text,
  add column live_description text,
  add column live_tags text[],
  add column live_language text;
update worlds
   set live_revision = revision, live_definition = definition, live_name = name,
       live_description = description, live_tags = tags, live_language = language
 where status = 'published';

-- The review rule, one row, changed by administrators (GET/PUT /api/admin/review-rule).
create table review_rule (
  id boolean primary key default true check (id),
  hold_first_publication boolean not null default true,
  hold_all_publications boolean not null default false,
  updated_by text references accounts (id) on delete set null,
  updated_at timestamptz not null default now()
);
insert into review_rule default values;

-- An administrator's flag on an account: every publication of that account is held.
create table account_review_flags (
  account_id text primary key references accounts (id) on delete cascade,
  hold_publications boolean not null default true,
  reason text not null default '',
  set_by text references accounts (id) on delete set null,
  set_at timestamptz not null default now()
);

-- A held publication ('publication': the work is not live) or held edit ('edit': a live version
-- keeps serving). At most one pending review per work.
create table world_reviews (
  id text primary key,
  world_id text not null references worlds (id) on delete cascade,
  owner_id text not null references accounts (id) on delete cascade,
  kind text not null check (kind in ('publication', 'edit')),
  revision integer not null,
  definition text not null,
  name text not null,
  description text not null default '',
  tags text[] not null default '{}',
  language text,
  state text not null default 'pending' check (state in ('pending', 'approved', 'rejected', 'withdrawn', 'superseded')),
  submitted_at timestamptz not null default now(),
  decided_by text references accounts (id) on delete set null,
  decided_at timestamptz,
  reason text check (reason is null or length(reason) <= 2000)
);
create unique index world_reviews_one_pending on world_reviews (world_id) where state = 'pending';
create index world_reviews_pending_idx on world_reviews (submitted_at) where state = 'pending';
create index world_reviews_world_idx on world_reviews (world_id, submitted_at desc);

-- Every publication transition: who, when, which revision, why. Kept when the work is deleted
-- (world_id set null) so an account's publishing history survives.
create table world_publication_events (
  id bigserial primary key,
  world_id text references worlds (id) on delete set null,
  owner_id text not null references accounts (id) on delete cascade,
  actor_id text references accounts (id) on delete set null,
  action text not null check (action in ('published', 'held', 'approved', 'rejected', 'unpublished', 'withdrawn')),
  revision integer,
  review_id text,
  reason text,
  created_at timestamptz not null default now()
);
create index world_publication_events_world_idx on world_publication_events (world_id, created_at);
create index world_publication_events_owner_idx on world_publication_events (owner_id) where action in ('published', 'approved');

-- World assets: bytes in the object store under assets/<world_id>/<id>, type sniffed from content.
create table world_assets (
  id text primary key,
  world_id text not null references worlds (id) on delete cascade,
  owner_id text not null references accounts (id) on delete cascade,
  kind text not null check (kind in ('image', 'audio', 'font')),
  content_type text not null,
  size integer not null check (size > 0),
  name text not null default '' check (length(name) <= 200),
  sha256 text not null,
  created_at timestamptz not null default now()
);
create index world_assets_world_idx on world_assets (world_id, created_at);
