-- Issue 47 point 4: the price of every reply. Each AI call's usage row keeps the prompt tokens read
-- from the provider's cache and written to it (both are part of tokens_in) and the credits it was
-- charged (official calls; their sum per account equals the credit ledger's charges, which are
-- written in the same transaction). Each reply keeps the same figures for the player.
alter table usage_ledger add column if not exists cached_tokens_in integer not null default 0;
alter table usage_ledger add column if not exists cache_write_tokens_in integer not null default 0;
alter table usage_ledger add column if not exists credits bigint;

alter table chat_messages add column if not exists cached_tokens integer;
alter table chat_messages add column if not exists cache_write_tokens integer;
-- On the player's own connection: what the reply would have cost in credits at the platform's
-- price of its model, when the price table names that model (null otherwise and on credits).
alter table chat_messages add column if not exists credits_estimate bigint;

-- The session's running total (every reply written in it, regenerated and continued ones included,
-- as each was charged): added by the statement that writes the reply.
alter table chat_sessions add column if not exists spent_replies integer not null default 0;
alter table chat_sessions add column if not exists spent_tokens_in bigint not null default 0;
alter table chat_sessions add column if not exists spent_cached_tokens bigint not null default 0;
alter table chat_sessions add column if not exists spent_tokens_out bigint not null default 0;
alter table chat_sessions add column if not exists spent_credits bigint not null default 0;
alter table chat_sessions add column if not exists spent_estimate bigint not null default 0;
