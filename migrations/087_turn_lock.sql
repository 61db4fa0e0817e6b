-- The turn lock of a conversation (one reply written at a time), on the session's row: the holder's
-- token and until when it holds it (a last resort for a holder that died: every path of a turn
-- releases it at once). On the row, a turn takes it in the statement that starts the turn and gives
-- it back in the one that ends it; it was a key of the shared store, two more round trips a turn.
alter table chat_sessions add column turn_token text, add column turn_until timestamptz;
