-- One account per e-mail address (issue 28, item 2).
--
-- An address identifies at most one account, whatever its letter case: a unique index on
-- lower(email) replaces the plain one. An address a sign-in provider gave without vouching for it
-- (its email_verified was false) is never an account's address: anyone can type someone else's
-- mailbox into a provider profile. An account without an address holds a placeholder under the
-- reserved .invalid top-level domain (RFC 2606), `<account id>@users.invalid`: no mailbox has it
-- and no sign-up may take it.
--
-- Existing data may break the rule. It is settled deterministically, and no account is deleted:
-- 1. An unverified provider address (the account signed in through a provider, the address is not
--    verified, and it is not the address of the account's own password sign-up) is replaced by
--    the account's placeholder. Older placeholders (`<provider>-<subject>@users.invalid`) stay.
-- 2. Of the accounts still sharing an address (case-insensitive), one keeps it: a verified holder
--    first, then the oldest, then the lowest id. The others get their placeholder, unverified.
--    Their password sign-in keeps working: password_credentials keeps its own (unique) address.
-- A placeholder that is already someone's address (a sign-up that typed it, before sign-ups
-- refused .invalid) gets a numbered suffix, `<account id>.1@users.invalid`, the first one free.
do $$
declare
  moving record;
  candidate text;
  n integer;
begin
  for moving in
    with unverified_provider as (
      select a.id
        from accounts a
       where not a.email_verified
         and lower(a.email) not like '%@users.invalid'
         and exists (select 1 from oauth_identities i where i.account_id = a.id)
         and not exists (select 1 from password_credentials p where p.account_id = a.id and lower(p.email) = lower(a.email))
    ),
    ranked as (
      select a.id, row_number() over (partition by lower(a.email) order by a.email_verified desc, a.created_at, a.id) as place
        from accounts a
       where a.id not in (select id from unverified_provider)
    )
    select id from unverified_provider
    union
    select id from ranked where place > 1
    order by id
  loop
    candidate := moving.id || '@users.invalid';
    n := 0;
    while exists (select 1 from accounts where lower(email) = lower(candidate) and id <> moving.id) loop
      n := n + 1;
      candidate := moving.id || '.' || n || '@users.invalid';
    end loop;
    update accounts set email = candidate, email_verified = false where id = moving.id;
  end loop;
end $$;

drop index accounts_email_idx;
create unique index accounts_email_key on accounts (lower(email));
