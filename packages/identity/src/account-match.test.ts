import { describe, expect, it } from 'vitest';
import { type AccountMatchLogEntry, matchPartnerAccount, type PartnerAccountRepository } from './account-match.ts';

interface Row {
  id: string;
  platformId: string | null;
  google: string | null;
  discord: string | null;
  coins: number;
}

function repository(rows: Row[]) {
  const calls: string[] = [];
  const logs: AccountMatchLogEntry[] = [];
  const snapshots: Row[][] = [];
  let seq = 0;
  const repo: PartnerAccountRepository<Row> = {
    async findByPlatformId(sub) {
      return rows.find((r) => r.platformId === sub) ?? null;
    },
    async findLegacyByProvider(provider, id) {
      calls.push(`find:${provider}`);
      return rows.find((r) => r.platformId === null && r[provider] === id) ?? null;
    },
    accountId: (r) => r.id,
    async create(identity) {
      const row = { id: `new-${++seq}`, platformId: identity.sub, google: null, discord: null, coins: 0 };
      rows.push(row);
      calls.push('create');
      return row;
    },
    async attachPlatformId(row, sub) {
      row.platformId = sub;
      calls.push(`attach:${row.id}`);
      return row;
    },
    async snapshot(accounts) {
      snapshots.push(accounts.map((a) => ({ ...a })));
      calls.push('snapshot');
    },
    async merge(kept, absorbed) {
      kept.coins += absorbed.coins;
      kept.discord = kept.discord ?? absorbed.discord;
      rows.splice(rows.indexOf(absorbed), 1);
      calls.push(`merge:${absorbed.id}->${kept.id}`);
      return kept;
    },
    log: (entry) => logs.push(entry),
  };
  return { repo, calls, logs, snapshots, rows };
}

const identity = (google?: string, discord?: string) => ({ sub: 'u-1', identities: { google, discord } });

describe('matchPartnerAccount (§4 step 4)', () => {
  it('an account with the platform id wins, even when legacy provider accounts exist', async () => {
    const { repo, calls } = repository([
      { id: 'a', platformId: 'u-1', google: null, discord: null, coins: 1 },
      { id: 'b', platformId: null, google: 'g', discord: null, coins: 2 },
    ]);
    const result = await matchPartnerAccount(repo, identity('g'));
    expect(result).toMatchObject({ outcome: 'existing', account: { id: 'a' } });
    expect(calls).toEqual([]);
  });

  it('zero matches: a new account', async () => {
    const { repo, rows } = repository([{ id: 'x', platformId: 'other', google: 'g', discord: null, coins: 0 }]);
    const result = await matchPartnerAccount(repo, identity('g'));
    expect(result.outcome).toBe('created'); // the google match belongs to an account that already has a platform id
    expect(rows.map((r) => r.platformId)).toContain('u-1');
  });

  it('one match (google): attach the platform id', async () => {
    const { repo, calls } = repository([{ id: 'b', platformId: null, google: 'g', discord: null, coins: 2 }]);
    const result = await matchPartnerAccount(repo, identity('g', 'd-unknown'));
    expect(result).toMatchObject({ outcome: 'attached', account: { id: 'b', platformId: 'u-1' } });
    expect(calls).toEqual(['find:google', 'find:discord', 'attach:b']);
  });

  it('one match (discord only): attach', async () => {
    const { repo } = repository([{ id: 'c', platformId: null, google: null, discord: 'd', coins: 0 }]);
    expect(await matchPartnerAccount(repo, identity(undefined, 'd'))).toMatchObject({ outcome: 'attached', account: { id: 'c' } });
  });

  it('google and discord pointing at the same account count once', async () => {
    const { repo, calls } = repository([{ id: 'b', platformId: null, google: 'g', discord: 'd', coins: 0 }]);
    expect((await matchPartnerAccount(repo, identity('g', 'd'))).outcome).toBe('attached');
    expect(calls).not.toContain('snapshot');
  });

  it('two matches: snapshot, log, merge into the google account, then attach', async () => {
    const { repo, calls, logs, snapshots, rows } = repository([
      { id: 'g-acc', platformId: null, google: 'g', discord: null, coins: 5 },
      { id: 'd-acc', platformId: null, google: null, discord: 'd', coins: 7 },
    ]);
    const result = await matchPartnerAccount(repo, identity('g', 'd'));
    expect(result.outcome).toBe('merged');
    expect(result.account).toMatchObject({ id: 'g-acc', platformId: 'u-1', coins: 12, discord: 'd' });
    expect(calls.slice(-3)).toEqual(['snapshot', 'merge:d-acc->g-acc', 'attach:g-acc']);
    expect(snapshots[0]!.map((r) => [r.id, r.coins])).toEqual([
      ['g-acc', 5],
      ['d-acc', 7],
    ]);
    expect(logs).toEqual([
      { event: 'partner_account_merge', sub: 'u-1', keptAccountId: 'g-acc', absorbedAccountId: 'd-acc', matchedBy: ['google', 'discord'] },
    ]);
    expect(rows).toHaveLength(1);
  });
});
