-- Issue 46: a group world names its characters (2–8 other worlds: the author's own or published
-- ones); a player starts a group scene of them from its page, played in the group world (its state,
-- rules and interface). Kept beside the definition (WorldDefinition 20.0.0 has no such field).
create table world_characters (
  world_id text not null references worlds (id) on delete cascade,
  character_world_id text not null references worlds (id) on delete cascade,
  position integer not null,
  primary key (world_id, character_world_id),
  check (world_id <> character_world_id)
);
create index world_characters_character_idx on world_characters (character_world_id);
