-- Issue 30 B: a persona's avatar may be a picture uploaded to the platform (a 256 px WebP kept
-- beside the account's profile picture and served under /api/account-pictures/<account>/), as
-- well as an https:// or asset:// link.
alter table personas drop constraint if exists personas_avatar_check;
alter table personas add constraint personas_avatar_check
  check (avatar is null or avatar ~ '^(https://|asset://)' or avatar ~ '^/api/account-pictures/acc_[A-Za-z0-9_-]+/[a-f0-9]{32}\.webp$');
