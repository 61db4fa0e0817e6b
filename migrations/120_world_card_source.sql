-- Issue 49: a world imported from a character card keeps that card, so that exporting the world as
-- a card writes back what this platform does not use (the card's version, unknown extensions, the
-- lorebook's name and SillyTavern settings, V3's own fields) with the author's edits merged in
-- (packages/world/src/import/card-source.ts). card_source is the JSON of ImportResult.cardSource.
-- card_picture_asset_id is the picture as the card had it (a PNG card's own image without its card
-- text chunks; or the original of an uploaded portrait): a card export embeds it as it is, never
-- re-encoded or resized.
alter table worlds
  add column card_source text,
  add column card_picture_asset_id text references world_assets (id) on delete set null;
