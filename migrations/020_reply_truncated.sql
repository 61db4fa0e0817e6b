-- A reply cut at the reply cap (AI_REPLY_MAX_BYTES): stored complete up to the cap and marked so.
alter table chat_messages add column truncated boolean not null default false;

-- Replies left 'streaming' by a process that died are found by maintenance through this index.
create index chat_messages_streaming_idx on chat_messages (created_at) where status = 'streaming';
