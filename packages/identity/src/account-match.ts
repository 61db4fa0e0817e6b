/**
 * Item 6c / §4 step 4: how a partner server finds the account for a verified platform identity.
 * Browser-safe and storage-free: the partner supplies a small repository.
 *
 * Order: an account whose platform id equals `sub` wins. Otherwise `identities.google`, then
 * `identities.discord`, are looked up among legacy accounts that have no platform id yet.
 * Zero matches: a new account. One: attach the platform id to it. Two different accounts:
 * merge them (logged, with a snapshot taken first), then attach.
 */

export interface PlatformIdentityRef {
  sub: string;
  identities: { google?: string; discord?: string; twitter?: string };
}

export interface PartnerAccountRepository<A> {
  findByPlatformId(sub: string): Promise<A | null>;
  /** A legacy account (no platform id yet) linked to this provider id, or null. */
  findLegacyByProvider(provider: 'google' | 'discord', providerId: string): Promise<A | null>;
  accountId(account: A): string;
  create(identity: PlatformIdentityRef): Promise<A>;
  attachPlatformId(account: A, sub: string): Promise<A>;
  /** Records both accounts as they are now, so a merge can be reviewed or undone. */
  snapshot(accounts: readonly A[], reason: string): Promise<void>;
  /** Folds `absorbed` into `kept` and returns the surviving account. */
  merge(kept: A, absorbed: A): Promise<A>;
  log(entry: AccountMatchLogEntry): void;
}

export interface AccountMatchLogEntry {
  event: 'partner_account_merge';
  sub: string;
  keptAccountId: string;
  absorbedAccountId: string;
  matchedBy: ['google', 'discord'];
}

export type AccountMatchOutcome = 'existing' | 'created' | 'attached' | 'merged';

export interface AccountMatch<A> {
  account: A;
  outcome: AccountMatchOutcome;
}

export async function matchPartnerAccount<A>(
  repo: PartnerAccountRepository<A>,
  identity: PlatformIdentityRef,
): Promise<AccountMatch<A>> {
  const existing = await repo.findByPlatformId(identity.sub);
  if (existing) return { account: existing, outcome: 'existing' };

  const google = identity.identities.google ? await repo.findLegacyByProvider('google', identity.identities.google) : null;
  const discord = identity.identities.discord
    ? await repo.findLegacyByProvider('discord', identity.identities.discord)
    : null;

  const distinct = [google, discord].filter((a): a is NonNullable<typeof a> => a !== null);
  if (distinct.length === 2 && repo.accountId(distinct[0]!) === repo.accountId(distinct[1]!)) distinct.pop();

  if (distinct.length === 0) return { account: await repo.create(identity), outcome: 'created' };
  if (distinct.length === 1) {
    return { account: await repo.attachPlatformId(distinct[0]!, identity.sub), outcome: 'attached' };
  }

  // Two different legacy accounts: the Google one is kept (Google is checked first).
  const kept = distinct[0]!;
  const absorbed = distinct[1]!;
  await repo.snapshot([kept, absorbed], `merge before attaching platform id ${identity.sub}`);
  repo.log({
    event: 'partner_account_merge',
    sub: identity.sub,
    keptAccountId: repo.accountId(kept),
    absorbedAccountId: repo.accountId(absorbed),
    matchedBy: ['google', 'discord'],
  });
  const merged = await repo.merge(kept, absorbed);
  return { account: await repo.attachPlatformId(merged, identity.sub), outcome: 'merged' };
}
