-- Issue 51, point 11: a session's deletion cost grew with the library. Two tables reference a
-- session with no index their foreign key's action can read, so each deleted session made
-- PostgreSQL's foreign-key trigger scan them whole:
-- - chat_sessions.branched_from (on delete set null): every session scanned for branches of it
--   (0.5 / 2.8 / 32 ms p50 at 3,000 / 30,000 / 300,000 sessions; bench/library-writes.bench.ts).
--   Few sessions are branches, so the index holds only those.
-- - session_participants.session_id (on delete cascade): its only index on session_id is partial
--   (the human members), which a lookup by session alone cannot use: every session's deletion
--   scanned the table.
-- containers/api/src/worlds/library-writes.test.ts keeps every such reference indexed.
-- Plain builds (the migration runs in a transaction, so not `concurrently`): each reads its table
-- once while session writes wait; the branches' index is small (only sessions that are branches).
create index chat_sessions_branched_from_idx on chat_sessions (branched_from) where branched_from is not null;
create index session_participants_session_idx on session_participants (session_id);
