-- Issue 51, point 11: a world's deletion (or its author's account's) found the rows that reference
-- it by scanning two tables whole, as the session's deletion did before migration 180: PostgreSQL's
-- foreign-key trigger looks them up by world, and no index had the column.
-- - update_notifications.world_id (on delete cascade): one row per follower and update, a table
--   that grows with the whole platform's following.
-- - session_participants.world_id (on delete set null): the characters of group scenes (only they
--   have a world here, so the index holds only them).
-- containers/api/src/worlds/library-writes.test.ts keeps every reference to a world or a session
-- indexed. Plain builds (the migration runs in a transaction), each one read of its table.
create index update_notifications_world_idx on update_notifications (world_id);
create index session_participants_world_idx on session_participants (world_id) where world_id is not null;
