-- Keyset pages for the lists that grow (issue 24): each list's order with the id as the tiebreak,
-- so a page resumes inside the index right after the previous page's last row.
create index chat_sessions_keyset_idx on chat_sessions (account_id, world_id, updated_at desc, id desc);
create index world_reviews_keyset_idx on world_reviews (state, submitted_at, id);
