import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { effectivePreference } from '../ai/metering.ts';
import { signUp as signUpAccount } from '../../../../tests/support/sign-up.ts';

describe('billing routes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.stop());

  const signUp = async (name: string) => {
    const b = new Browser(server.url);
    const r = await signUpAccount(server, b, { email: `${name}-${Date.now()}@example.com`, password: 'long enough pw' });
    return { b, id: r.account.id };
  };

  it('free plan with no credits by default; preference saved; only administrators grant credits, each grant in the ledger', async () => {
    const player = await signUp('payer');
    expect(await (await player.b.fetch('/api/billing')).json()).toMatchObject({ plan: 'free', credits: 0, preference: 'auto', source: 'private', officialAvailable: false, hasConnection: false, ledger: [] });
    expect(await (await player.b.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'mix' } })).json()).toMatchObject({ preference: 'mix' });
    expect((await player.b.fetch('/api/billing/preference', { method: 'PUT', json: { preference: 'free-money' } })).status).toBe(400);

    const denied = await player.b.fetch('/api/admin/credits', { method: 'POST', json: { accountId: player.id, amount: 100, reason: 'self' } });
    expect(denied.status).toBe(403);
    const admin = await signUp('admin');
    await server.ctx.db.primary.query('update accounts set is_admin = true where id = $1', [admin.id]);
    const granted = await admin.b.fetch('/api/admin/credits', { method: 'POST', json: { accountId: player.id, amount: 100, reason: 'welcome' } });
    expect(await granted.json()).toMatchObject({ credits: 100, account: { displayName: expect.any(String) } });
    const after = (await (await player.b.fetch('/api/billing')).json()) as { credits: number; ledger: { kind: string; amount: number; detail: string }[] };
    expect(after.credits).toBe(100);
    expect(after.ledger).toEqual([expect.objectContaining({ kind: 'grant', amount: 100, balanceAfter: 100, detail: 'welcome' })]);
    expect((await admin.b.fetch('/api/admin/credits', { method: 'POST', json: { accountId: player.id, amount: -5, reason: 'x' } })).status).toBe(400);
  });
});

describe('the source of AI for a preference', () => {
  it("'auto' is the own connection when there is one, else the platform's credits when configured; the others are pinned", () => {
    expect(effectivePreference('auto', true, true)).toBe('private');
    expect(effectivePreference('auto', false, true)).toBe('official');
    expect(effectivePreference('auto', false, false)).toBe('private');
    expect(effectivePreference('private', false, true)).toBe('private');
    expect(effectivePreference('official', true, true)).toBe('official');
    expect(effectivePreference('mix', true, true)).toBe('mixed');
  });
});
