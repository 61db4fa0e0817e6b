-- Issue 31: the character's avatar (portrait) of a world, one of its own image assets, set when a
-- character card's picture is imported. Like the cover, the live version keeps its own, and a
-- held review carries the one it would publish. Issue 30 B shows it on the character's chat bubbles.
alter table worlds
  add column avatar_asset_id text references world_assets (id) on delete set null,
  add column live_avatar_asset_id text references world_assets (id) on delete set null;
alter table world_reviews add column avatar_asset_id text references world_assets (id) on delete set null;
