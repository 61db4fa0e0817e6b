-- Issue 51, point 7: what was sent for a reply, kept so that a session's stored prompts grow with
-- the session, not its square (packages/conversations/src/prompt-record.ts).
-- Expand only: chat_prompts (migration 096) keeps the records older releases wrote and is read as
-- before; new records go here, their texts once per session in chat_prompt_texts.

-- A reply's prompt as a compact record: texts by hash, the conversation's places as runs.
create table chat_prompt_records (
  message_id text primary key references chat_messages (id) on delete cascade,
  record jsonb not null,
  created_at timestamptz not null default now()
);

-- Each text a session's prompts sent (lore, system text, persona, the player's line), once, by
-- the first 16 bytes of its SHA-256. Gone with the session.
create table chat_prompt_texts (
  session_id text not null references chat_sessions (id) on delete cascade,
  hash bytea not null,
  body text not null,
  primary key (session_id, hash)
);
