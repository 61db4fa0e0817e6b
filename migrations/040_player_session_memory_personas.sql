-- The player (issue 20): session memory per session (prompt step 9, editable by the player) and
-- persona details for the persona macros (persona_appearance, persona_personality, persona_backstory).
alter table chat_sessions add column memory text not null default '';
alter table personas add column appearance text not null default '';
alter table personas add column personality text not null default '';
alter table personas add column backstory text not null default '';
