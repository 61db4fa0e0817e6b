-- Verify-first sign-up (issue 35, point 5: no route tells whether an address has an account).
--
-- A password sign-up no longer creates the account: it answers the same whether or not the address
-- is taken, and for a free address keeps the request here until the link mailed to it is followed.
-- Following the link creates the account, its address verified, and signs that browser in. A link
-- carries `<id>.<secret>`; only the SHA-256 of the secret is stored, compared in constant time after
-- the row is found by its id. The password is kept only as its scrypt hash. A new sign-up for the
-- same address replaces the earlier one (its link stops working). Rows that ended are purged with
-- the account links (a week after they ended).
--
-- Completing needs the password chosen at sign-up as well as the link: whoever signed up with
-- someone else's address cannot have that person create an account whose password the stranger
-- knows by following the mail (pre-account takeover). failed_attempts counts wrong passwords; the
-- fifth ends the link.
create table pending_signups (
  id text primary key,
  email text not null,
  password_hash text not null,
  display_name text not null,
  username text,
  return_to text,
  secret_hash bytea not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  used_at timestamptz,
  failed_attempts integer not null default 0
);
create index pending_signups_email_idx on pending_signups (lower(email)) where used_at is null;
