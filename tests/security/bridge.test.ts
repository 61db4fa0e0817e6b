import { request as httpRequest } from 'node:http';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { Browser as CookieClient, type TestServer } from '../support/server.ts';

/**
 * Issue 28, point 1: a published world's interface calls every bridge member that names an id with
 * traversals, encoded traversals, `?`, `#`, backslashes and other worlds' ids, in the real player of
 * a player who has an account, an AI connection and sessions of another world. Each call must be
 * answered with a refusal, no request may leave the open world and session, and nothing of the
 * player may change (checked in the database afterwards).
 */
const TRAVERSALS = [
  '../../../account?',
  '../../../partners/demo/token?',
  '../../../settings/ai?',
  '%2e%2e%2f%2e%2e%2f%2e%2e%2faccount',
  '..%2F..%2F..%2Faccount',
  '?',
  '#',
  '..\\..\\..\\account',
  '..',
  '.',
  '',
  'msg_x/../../../../account',
];

/** Members that send an id or a name to the parent, the argument list (ID stands for the id tried) and which of the other world's ids fit them. In an order that keeps the worst for last (before the fix, deleteMessage deleted the account). */
const MEMBERS: [member: string, args: unknown[], other: ('world' | 'session' | 'message' | 'checkpoint')[]][] = [
  ['listSessions', ['ID'], ['world']],
  ['createSession', ['ID'], ['world']],
  ['deleteSession', ['ID'], ['session']],
  ['restoreCheckpoint', ['ID'], ['checkpoint', 'session']],
  ['deleteCheckpoint', ['ID'], ['checkpoint', 'session']],
  ['editMessage', ['ID', 'edited by the world'], ['message', 'session']],
  ['regenerateMessage', ['ID'], ['message']],
  ['swipeMessage', ['ID', 'left'], ['message']],
  ['revertToMessage', ['ID'], ['message']],
  ['branchFromMessage', ['ID'], ['message']],
  ['setVariable', ['ID', 1], []],
  ['setVariable', ['ID', 1, { scope: 'global' }], []],
  ['executeAction', ['ID'], []],
  ['storage.get', ['ID'], []],
  ['storage.set', ['ID', 'written by the world'], []],
  ['storage.remove', ['ID'], []],
  ['pinModel', ['ID'], []],
  ['unpinModel', ['ID'], []],
  ['setModel', ['ID'], []],
  ['playAudio', ['ID'], []],
  ['deleteMessage', ['ID'], ['message', 'session']],
];

const NAVIGATIONS = ['//evil.example/x', 'https://evil.example/', '/\\evil.example/x', 'javascript:alert(1)', '', '/library\u0000x'];

const INTERFACE = String.raw`
const y = () => window.yumina;
const MEMBERS = __MEMBERS__;
const TRAVERSALS = __TRAVERSALS__;
const NAVIGATIONS = __NAVIGATIONS__;
const call = (member, args) => member.startsWith('storage.') ? y().storage[member.slice(8)](...args) : y()[member](...args);
async function outcome(run) {
  try {
    const value = await Promise.race([
      Promise.resolve().then(run),
      new Promise((_, reject) => setTimeout(() => reject(Object.assign(new Error('no answer within 4 s'), { code: 'NO_ANSWER' })), 4000)),
    ]);
    return 'done: ' + JSON.stringify(value === undefined ? null : value).slice(0, 200);
  } catch (e) {
    if (e && e.code === 'NO_ANSWER') return 'no answer';
    return 'refused ' + (e && e.code) + ': ' + String(e && e.message).slice(0, 200);
  }
}
async function attack() {
  const targets = JSON.parse(await y().storage.get('targets'));
  const attempts = {};
  for (const [member, template, others] of MEMBERS) {
    const ids = [...TRAVERSALS.map((t) => ['traversal', t]), ...others.map((o) => ['other ' + o, targets[o]])];
    await Promise.all(ids.map(async ([kind, id]) => {
      const args = template.map((a) => (a === 'ID' ? id : a));
      attempts[member + JSON.stringify(args) + ' ' + kind] = await outcome(() => call(member, args));
    }));
    // Progress for the test, which reads the console (the page may be gone if an attempt worked).
    console.log('BRIDGE-ATTEMPTS ' + JSON.stringify(attempts));
  }
  await Promise.all(NAVIGATIONS.map(async (path) => { attempts['navigate' + JSON.stringify([path]) + ' navigation'] = await outcome(() => y().navigate(path)); }));
  // What the members that do work return: only the fields they document.
  const returned = {
    listSessions: await outcome(() => y().listSessions(y().worldId).then((list) => list.map((s) => Object.keys(s).sort().join(',')))),
    loadCheckpoints: await outcome(() => y().loadCheckpoints()),
    'storage.set': await outcome(() => y().storage.set('fine-key', 'fine value')),
    'storage.remove': await outcome(() => y().storage.remove('fine-key')),
    getModels: await outcome(() => y().getModels().then((m) => [...new Set(m.models.map((x) => Object.keys(x).sort().join(',')))])),
    setVariable: await outcome(() => y().setVariable('stamina', 3)),
  };
  console.log('BRIDGE-REPORT ' + JSON.stringify({ attempts, returned }));
  return { attempts, returned };
}
export default function Attack() {
  const [report, setReport] = React.useState(null);
  return (
    <div className="p-2">
      <button id="run" type="button" onClick={() => attack().then(setReport, (e) => setReport({ failed: String(e) }))}>Attack</button>
      <span id="done">{report ? 'done' : ''}</span>
      <pre id="report">{report ? JSON.stringify(report) : ''}</pre>
    </div>
  );
}
`
  .replace('__MEMBERS__', JSON.stringify(MEMBERS))
  .replace('__TRAVERSALS__', JSON.stringify(TRAVERSALS))
  .replace('__NAVIGATIONS__', JSON.stringify(NAVIGATIONS));

function attackWorld() {
  const world = sampleWorld('willow-street') as Record<string, unknown>;
  return {
    ...world,
    id: '3c1d0e9f-2b4a-4c6d-8e7f-9a0b1c2d3e4f',
    name: 'Hostile Interface',
    variables: [
      ...(world.variables as unknown[]),
      { id: 'stamina', name: 'Stamina', type: 'number', defaultValue: 5, min: 0, max: 10, description: '', behaviorRules: '' },
    ],
    rootComponent: { id: '5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d', name: 'Attack', entryFile: 'index.tsx', files: { 'index.tsx': INTERFACE }, updatedAt: '2026-11-24T00:00:00.000Z' },
  };
}

describe("a world's interface never acts as the player beyond its world and session", () => {
  let server: TestServer;
  let browser: Browser;
  let provider: FakeOpenAi;
  useBrowserPlatform({ provider: { apiKey: 'bridge-key' } }, (p) => ({ server, browser, provider } = p));

  it('every bridge member refuses traversals and other worlds’ ids; the account, AI connection and other sessions stay', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    const other = { ...sampleWorld('willow-street'), name: 'Another World', rootComponent: null };
    const [worldId, otherWorldId] = await signUpWithWorlds(page, { providerUrl: provider.url, apiKey: 'bridge-key', worlds: [attackWorld(), other] });
    // Sessions of another world, one with a checkpoint; their ids are what the attacker tries.
    const targets = await page.evaluate(
      async ({ worldId, otherWorldId }) => {
        const call = async (url: string, method: string, body?: unknown) => {
          const res = await fetch(url, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
          if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
          return res.json();
        };
        const first = await call(`/api/worlds/${otherWorldId}/sessions`, 'POST');
        const second = await call(`/api/worlds/${otherWorldId}/sessions`, 'POST');
        const checkpoint = await call(`/api/sessions/${first.session.id}/checkpoints`, 'POST', { name: 'kept' });
        const targets = { world: otherWorldId, session: first.session.id, secondSession: second.session.id, message: first.messages[0].id, checkpoint: checkpoint.id };
        await call(`/api/worlds/${worldId}/storage/targets`, 'PUT', { value: JSON.stringify(targets) });
        return targets;
      },
      { worldId: worldId!, otherWorldId: otherWorldId! },
    );
    const accountId = await page.evaluate(() => fetch('/api/auth/session').then((r) => r.json()).then((s) => s.account.id as string));

    await page.goto(`${server.url}/play/${worldId}`);
    const frame = page.frameLocator('iframe[title="World interface"]');
    await expect.poll(() => frame.locator('#run').count(), { timeout: 20_000 }).toBe(1);
    const db = server.ctx.db.primary;
    const openSessions = async () => (await db.query<{ id: string }>('select id from chat_sessions where world_id = $1 order by id', [worldId])).rows.map((r) => r.id);
    await expect.poll(openSessions).toHaveLength(1);
    const sessionsBefore = await openSessions();
    const connection = async () => (await db.query('select base_url, default_model, key_ciphertext from ai_connections where account_id = $1', [accountId])).rows;
    const connectionBefore = await connection();
    expect(connectionBefore).toHaveLength(1);

    let progress: Record<string, string> = {};
    let finished: { attempts: Record<string, string>; returned: Record<string, string> } | null = null;
    page.on('console', (m) => {
      const text = m.text();
      if (text.startsWith('BRIDGE-ATTEMPTS ')) progress = JSON.parse(text.slice(16));
      if (text.startsWith('BRIDGE-REPORT ')) finished = JSON.parse(text.slice(14));
    });
    const requests: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.origin === server.url) requests.push(`${r.method()} ${url.pathname}${url.search}`);
    });
    await frame.locator('#run').click();
    // Until the interface reports, or the player left its page (an attempt navigated or signed it out).
    const left = () => new URL(page.url()).pathname !== `/play/${worldId}`;
    await expect.poll(() => finished !== null || left(), { timeout: 200_000, interval: 500 }).toBe(true);
    // Soft expectations from here on: a failure lists everything that went wrong, not just the first.
    expect.soft(left() ? `the player left its page for ${page.url()}` : 'stayed').toBe('stayed');
    const report = (finished ?? { attempts: progress, returned: {} }) as { attempts: Record<string, string>; returned: Record<string, string> };
    if (process.env.BRIDGE_DEBUG) console.log(JSON.stringify(report, null, 1));

    // Every attempt is answered with a refusal; none works, none is left without an answer.
    const notRefused = Object.entries(report.attempts).filter(([, result]) => !result.startsWith('refused ')).map(([what, result]) => `${what} → ${result}`);
    expect.soft(notRefused).toEqual([]);
    expect.soft(Object.keys(report.attempts)).toHaveLength(MEMBERS.reduce((n, [, , others]) => n + TRAVERSALS.length + others.length, 0) + NAVIGATIONS.length);
    // A malformed id is refused in the parent, before any request, with a code that says so.
    const wrongCode = Object.entries(report.attempts)
      .filter(([what]) => what.endsWith(' traversal'))
      .filter(([, result]) => !result.startsWith('refused INVALID_ID: '))
      .map(([what, result]) => `${what} → ${result}`);
    expect.soft(wrongCode).toEqual([]);
    expect.soft(report.attempts[`listSessions${JSON.stringify([targets.world])} other world`]).toMatch(/^refused OTHER_WORLD: /);
    expect.soft(report.attempts[`createSession${JSON.stringify([targets.world])} other world`]).toMatch(/^refused OTHER_WORLD: /);
    expect.soft(report.attempts[`deleteSession${JSON.stringify([targets.session])} other session`]).toMatch(/^refused NOT_FOUND: /);

    // Nothing left the open world and session: no request to the account, the settings, a partner,
    // the other world or its sessions.
    const forbidden = [/^\S+ \/api\/account/, /^(PUT|POST|PATCH|DELETE) \/api\/settings/, /^\S+ \/api\/partners\//, new RegExp(`/${otherWorldId}\\b`), new RegExp(`/${targets.session}\\b`), new RegExp(`/${targets.secondSession}\\b`)];
    expect.soft(requests.filter((r) => forbidden.some((f) => f.test(r)))).toEqual([]);

    // The members that work answer only their documented fields.
    expect.soft(report.returned.listSessions).toBe('done: ["createdAt,id,messageCount,title,updatedAt,worldId"]');
    expect.soft(report.returned.loadCheckpoints).toBe('done: []');
    expect.soft(report.returned['storage.set']).toBe('done: null');
    expect.soft(report.returned['storage.remove']).toBe('done: null');
    expect.soft(report.returned.getModels).toBe('done: ["contextLength,id,name,provider"]');
    expect.soft(report.returned.setVariable).toBe('done: null');

    // Nothing of the player changed (read from the database).
    const count = async (sql: string, params: unknown[]) => (await db.query<{ n: number }>(sql, params)).rows[0]!.n;
    expect.soft(await count('select count(*)::int as n from accounts where id = $1', [accountId])).toBe(1);
    expect.soft(await connection()).toEqual(connectionBefore);
    expect.soft((await db.query<{ id: string }>('select id from chat_sessions where world_id = $1 order by id', [otherWorldId])).rows.map((r) => r.id).sort()).toEqual(
      [targets.session, targets.secondSession].sort(),
    );
    expect.soft(await count('select count(*)::int as n from chat_checkpoints where id = $1', [targets.checkpoint])).toBe(1);
    expect.soft(await count('select count(*)::int as n from chat_messages where id = $1', [targets.message])).toBe(1);
    expect.soft(await openSessions()).toEqual(sessionsBefore);
    expect.soft(await count('select count(*)::int as n from model_pins where account_id = $1', [accountId])).toBe(0);
    expect.soft(await count('select count(*)::int as n from worlds where id = any($1)', [[worldId, otherWorldId]])).toBe(2);
    expect.soft((await db.query<{ key: string }>('select key from world_storage where account_id = $1 order by key', [accountId])).rows.map((r) => r.key)).toEqual(['targets']);
    // The refused navigations left the player where it was.
    expect.soft(new URL(page.url()).pathname).toBe(`/play/${worldId}`);
    expect.soft(errors).toEqual([]);
    await context.close();
  }, 300_000);

  it('the server answers 404 for a world, session, message or checkpoint parameter that is not a platform id (hand-made paths)', async () => {
    const player = new CookieClient(server.url);
    expect((await player.fetch('/api/auth/signup', { method: 'POST', json: { email: `raw-${Date.now()}@example.com`, password: 'long enough pw' } })).status).toBe(201);
    const raw = (method: string, path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        // node:http sends the path as written (fetch would resolve dot segments first).
        const req = httpRequest(`${server.url}${path}`, { method, headers: { cookie: player.cookieHeader, origin: server.url } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    for (const [method, path] of [
      ['GET', '/api/sessions/..%2Faccount'],
      ['DELETE', '/api/sessions/a%2Fb'],
      ['GET', '/api/worlds/a%5Cb/sessions'],
      ['PATCH', '/api/sessions/cnv_AAAAAAAAAAAAAAAAAAAAAA/messages/..%2F..%2Faccount'],
      ['POST', '/api/sessions/cnv_AAAAAAAAAAAAAAAAAAAAAA/checkpoints/%3F/restore'],
      ['GET', '/api/library/wld_x%23y'],
    ] as const) {
      const answer = await raw(method, path);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(JSON.parse(answer.body).error, `${method} ${path}`).toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('is not an id of this platform') });
    }
    // The account is still there.
    expect(((await (await player.fetch('/api/auth/session')).json()) as { account: unknown }).account).not.toBeNull();
  });
});
