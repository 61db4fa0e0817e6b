-- Issue 30 A2: a failed turn is not the world's message. Its failure is kept on the player's
-- message it answered (error_code beside error_message), the reply row is not kept, and the
-- player retries from there; a turn that completes clears it.
alter table chat_messages add column error_code text;
