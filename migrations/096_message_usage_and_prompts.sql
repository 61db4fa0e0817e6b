-- Per reply, what it used: the prompt's tokens (token_count holds the reply's) and, when the turn
-- ran on platform credits, the credits it was charged (null on the player's own connection).
alter table chat_messages add column prompt_tokens integer;
alter table chat_messages add column credits_charged bigint;

-- What was sent for a reply (the player's "what was sent"): the prompt in the order the engine
-- built it, with the entries that fired and why. The conversation's own messages are kept once,
-- in chat_messages: here only their place (content null) and the player's latest message.
create table chat_prompts (
  message_id text primary key references chat_messages (id) on delete cascade,
  prompt jsonb not null,
  created_at timestamptz not null default now()
);
