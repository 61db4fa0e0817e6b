-- Issue 47 point 1: the wire protocol of a player's own AI connection (OpenAI-compatible, the
-- Anthropic Messages API, Google Gemini). Existing connections keep speaking OpenAI-compatible.
alter table ai_connections add column if not exists kind text not null default 'openai';
alter table ai_connections drop constraint if exists ai_connections_kind_check;
alter table ai_connections add constraint ai_connections_kind_check check (kind in ('openai', 'anthropic', 'gemini'));
