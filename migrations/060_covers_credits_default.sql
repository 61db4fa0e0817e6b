-- Issue 22: a world's cover image (one of its own image assets; the live version keeps its own),
-- and the billing preference 'auto' (the default): the account's own AI connection when it has
-- one, otherwise the platform's credits when the platform's provider is configured.
alter table worlds
  add column cover_asset_id text references world_assets (id) on delete set null,
  add column live_cover_asset_id text references world_assets (id) on delete set null;
update worlds set live_cover_asset_id = cover_asset_id where status = 'published';

alter table world_reviews add column cover_asset_id text references world_assets (id) on delete set null;

alter table billing_accounts drop constraint billing_accounts_preference_check;
alter table billing_accounts add constraint billing_accounts_preference_check check (preference in ('auto', 'official', 'private', 'mix'));
alter table billing_accounts alter column preference set default 'auto';

-- Library sorts: recently updated live versions.
alter table worlds add column live_updated_at timestamptz;
update worlds set live_updated_at = coalesce(published_at, updated_at) where status = 'published';
create index worlds_live_updated_idx on worlds (live_updated_at desc, id) where status = 'published';
create index chat_sessions_world_idx on chat_sessions (world_id);
