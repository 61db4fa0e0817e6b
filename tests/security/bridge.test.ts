import { request as httpRequest } from 'node:http';
import type { Browser } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import type { FakeOpenAi } from '../support/fake-openai.ts';
import { sampleWorld, signUpWithWorlds } from '../support/player-world.ts';
import { Browser as CookieClient, type TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

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

/**
 * Issue 34, point 4: the compatibility fetch of an older world (plain `fetch('/api/…')`, no SDK),
 * signed in. Each forwarded read is answered with the route's documented fields; every call outside
 * the open world and session (other worlds, other sessions, account, settings and partner routes,
 * traversals, encoded traversals, writes) is refused with a TypeError whose code is
 * FETCH_NOT_ALLOWED. `{world}`, `{session}`, `{message}` are the open ones; `{other…}` the other
 * world's, which the interface reads from its storage.
 */
const COMPAT_READS = [
  '/api/version',
  '/api/worlds/{world}',
  '/api/library/{world}',
  '/api/worlds/{world}/updates?limit=5',
  '/api/worlds/{world}/sessions',
  '/api/worlds/{world}/storage',
  '/api/worlds/{world}/player',
  '/api/sessions/{session}?limit=10',
  '/api/sessions/{session}/messages/{message}',
  '/api/sessions/{session}/checkpoints',
  '/api/models',
];

const COMPAT_ATTACKS: [method: string, url: string][] = [
  // other worlds and sessions
  ['GET', '/api/worlds/{otherWorld}'],
  ['GET', '/api/library/{otherWorld}'],
  ['GET', '/api/worlds/{otherWorld}/sessions'],
  ['GET', '/api/worlds/{otherWorld}/storage'],
  ['GET', '/api/worlds/{otherWorld}/player'],
  ['GET', '/api/sessions/{otherSession}'],
  ['GET', '/api/sessions/{otherSession}/checkpoints'],
  ['GET', '/api/sessions/{otherSession}/messages/{otherMessage}'],
  ['GET', '/api/sessions/{session}/messages/{otherMessage}'],
  // the account, settings, partners and the rest of the API
  ['GET', '/api/auth/session'],
  ['GET', '/api/account'],
  ['GET', '/api/settings/ai'],
  ['GET', '/api/partners/demo/config'],
  ['GET', '/api/me/sessions'],
  ['GET', '/api/personas'],
  ['GET', '/api/billing'],
  ['GET', '/api/worlds'],
  ['GET', '/api/worlds/{world}/assets'],
  ['GET', '/api/worlds/{world}/updates/events'],
  ['GET', 'https://evil.example/api/version'],
  ['GET', '//evil.example/api/version'],
  // traversal and encoded traversal
  ['GET', '/api/worlds/{world}/../../account'],
  ['GET', '/api/worlds/{world}/../../settings/ai'],
  ['GET', '/api/worlds/{world}/%2e%2e/%2e%2e/account'],
  ['GET', '/api/worlds/{world}%2F..%2F..%2Faccount'],
  ['GET', '/api/sessions/{session}/messages/..%2F..%2F..%2Faccount'],
  ['GET', '/api/sessions/{session}/messages/..\\..\\..\\account'],
  ['GET', '/api/sessions/{session}/checkpoints/%3F'],
  ['GET', '/api/worlds/{world}/sessions?cursor=../../account'],
  ['GET', '/api/sessions/{session}?limit=1&then=../../account'],
  ['GET', '/api/worlds/{world}/storage/..'],
  // writes, even on the open world's and session's own routes
  ['HEAD', '/api/version'],
  ['POST', '/api/worlds/{world}/sessions'],
  ['PUT', '/api/worlds/{world}/storage/targets'],
  ['DELETE', '/api/worlds/{world}/storage/targets'],
  ['DELETE', '/api/sessions/{session}'],
  ['POST', '/api/sessions/{session}/messages'],
  ['POST', '/api/sessions/{session}/restart'],
  ['PATCH', '/api/sessions/{session}/messages/{message}'],
  ['DELETE', '/api/sessions/{session}/checkpoints/{checkpoint}'],
  ['PUT', '/api/worlds/{world}'],
  ['POST', '/api/worlds/{world}/unpublish'],
  ['DELETE', '/api/worlds/{world}'],
  ['DELETE', '/api/account'],
  ['PUT', '/api/settings/ai'],
  ['POST', '/api/partners/demo/token'],
];

const COMPAT_INTERFACE = String.raw`
const READS = __READS__;
const ATTACKS = __ATTACKS__;
// A call that never settles (a stream) is reported, not waited for.
const timed = (work) => Promise.race([work, new Promise((_, reject) => setTimeout(() => reject(Object.assign(new Error('no answer within 5 s'), { name: 'Timeout', code: 'NO_ANSWER' })), 5000))]);
async function run() {
  const y = window.yumina;
  const targets = JSON.parse(await y.storage.get('targets'));
  const ids = { world: y.worldId, session: y.sessionId, message: y.messages[0].id, checkpoint: y.checkpoints[0].id, ...targets };
  const fill = (t) => t.replace(/\{(\w+)\}/g, (_, k) => ids[k]);
  const reads = {};
  for (const t of READS) {
    try {
      reads[t] = await timed(fetch(fill(t)).then(async (r) => ({ status: r.status, type: r.headers.get('content-type'), body: await r.json() })));
    } catch (e) {
      reads[t] = { refused: e.name + ' ' + e.code + ': ' + e.message };
    }
  }
  const attacks = {};
  await Promise.all(ATTACKS.map(async ([method, t]) => {
    const init = method === 'GET' || method === 'HEAD' ? { method } : { method, headers: { 'content-type': 'application/json' }, body: '{"value":"written by the world","content":"x"}' };
    try {
      attacks[method + ' ' + t] = await timed(fetch(fill(t), init).then(async (r) => 'answered ' + r.status + ' ' + (await r.text()).slice(0, 200)));
    } catch (e) {
      attacks[method + ' ' + t] = 'refused ' + e.name + ' ' + e.code + ': ' + String(e.message).slice(0, 300);
    }
  }));
  return { reads, attacks };
}
export default function OlderWorld() {
  const [report, setReport] = React.useState(null);
  return (
    <div className="p-2">
      <button id="run" type="button" onClick={() => run().then((r) => { console.log('COMPAT-REPORT ' + JSON.stringify(r)); setReport(r); }, (e) => console.log('COMPAT-REPORT ' + JSON.stringify({ failed: String(e) })))}>Run</button>
      <span id="done">{report ? 'done' : ''}</span>
    </div>
  );
}
`
  .replace('__READS__', JSON.stringify(COMPAT_READS))
  .replace('__ATTACKS__', JSON.stringify(COMPAT_ATTACKS));

function olderWorld() {
  const world = sampleWorld('willow-street') as Record<string, unknown>;
  return {
    ...world,
    id: '7d2e1f0a-3b4c-4d5e-8f6a-7b8c9d0e1f2a',
    name: 'Older Interface',
    rootComponent: { id: '6b5c4d3e-2f1a-4b0c-9d8e-7f6a5b4c3d2e', name: 'Older', entryFile: 'index.tsx', files: { 'index.tsx': COMPAT_INTERFACE }, updatedAt: '2026-11-27T00:00:00.000Z' },
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
    const [worldId, otherWorldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'bridge-key', worlds: [attackWorld(), other] });
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

  it("an older world's fetch('/api/…') gets each forwarded read as the signed-in player; everything else is refused and changes nothing", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${server.url}/`);
    const other = { ...sampleWorld('willow-street'), name: 'Another World', rootComponent: null };
    const [worldId, otherWorldId] = await signUpWithWorlds(server, page, { providerUrl: provider.url, apiKey: 'bridge-key', worlds: [olderWorld(), other] });
    // Published without review (the rule holds a first publication by default), so it has a library record.
    await server.ctx.db.primary.query('update review_rule set hold_first_publication = false');
    const targets = await page.evaluate(
      async ({ worldId, otherWorldId }) => {
        const call = async (url: string, method: string, body?: unknown) => {
          const res = await fetch(url, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
          if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
          return res.json();
        };
        await call(`/api/worlds/${worldId}/publish`, 'POST');
        const first = await call(`/api/worlds/${otherWorldId}/sessions`, 'POST');
        await call(`/api/sessions/${first.session.id}/checkpoints`, 'POST', { name: 'theirs' });
        const targets = { otherWorld: otherWorldId, otherSession: first.session.id, otherMessage: first.messages[0].id };
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
    const sessionsOf = async (world: string) => (await db.query<{ id: string }>('select id from chat_sessions where world_id = $1 order by id', [world])).rows.map((r) => r.id);
    await expect.poll(() => sessionsOf(worldId!)).toHaveLength(1);
    const [sessionId] = await sessionsOf(worldId!);
    // A checkpoint of the open session, saved by the player; the interface sees it in its state.
    await page.evaluate((id) => fetch(`/api/sessions/${id}/checkpoints`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"mine"}' }), sessionId!);
    await page.reload();
    await expect.poll(() => frame.locator('#run').count(), { timeout: 20_000 }).toBe(1);

    // Everything of the player that a write could change, before.
    const snapshot = async () => ({
      account: (await db.query('select id, email from accounts where id = $1', [accountId])).rows,
      connection: (await db.query('select base_url, default_model, key_ciphertext from ai_connections where account_id = $1', [accountId])).rows,
      sessions: (await db.query('select id, world_id, message_count, state from chat_sessions where account_id = $1 order by id', [accountId])).rows,
      messages: (await db.query('select m.id, m.content from chat_messages m join chat_sessions s on s.id = m.session_id where s.account_id = $1 order by m.id', [accountId])).rows,
      checkpoints: (await db.query('select c.id, c.name from chat_checkpoints c join chat_sessions s on s.id = c.session_id where s.account_id = $1 order by c.id', [accountId])).rows,
      storage: (await db.query('select world_id, key, value from world_storage where account_id = $1 order by world_id, key', [accountId])).rows,
      worlds: (await db.query('select id, status, revision from worlds where owner_id = $1 order by id', [accountId])).rows,
    });
    const before = await snapshot();
    expect(before.checkpoints).toHaveLength(2);

    let report: { reads: Record<string, { status?: number; type?: string; body?: Record<string, unknown>; refused?: string }>; attacks: Record<string, string>; failed?: string } | null = null;
    page.on('console', (m) => {
      if (m.text().startsWith('COMPAT-REPORT ')) report = JSON.parse(m.text().slice(14));
    });
    const requests: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.origin === server.url) requests.push(`${r.method()} ${url.pathname}${url.search}`);
    });
    await frame.locator('#run').click();
    await expect.poll(() => report !== null, { timeout: 60_000, interval: 250 }).toBe(true);
    const { reads, attacks, failed } = report!;
    expect(failed).toBeUndefined();
    if (process.env.BRIDGE_DEBUG) console.log(JSON.stringify(report, null, 1));

    // Every forwarded read is answered 200 with JSON, and only with the documented fields.
    for (const url of COMPAT_READS) {
      expect.soft(reads[url], url).toMatchObject({ status: 200, type: 'application/json; charset=utf-8' });
    }
    const body = (url: string) => reads[url]?.body ?? {};
    const list = (url: string, key: string) => (body(url)[key] ?? []) as Record<string, unknown>[];
    const keys = (value: unknown) => Object.keys((value ?? {}) as object).sort().join(',');
    const version = ((await (await page.request.get(`${server.url}/api/version`)).json()) as { version: string }).version;
    expect.soft(body('/api/version')).toEqual({ version });
    expect.soft(body('/api/worlds/{world}')).toMatchObject({ id: worldId, world: { name: 'Older Interface' } });
    expect.soft(keys(body('/api/worlds/{world}'))).toBe('coverUrl,createdAt,id,publishedAt,revision,updatedAt,world');
    expect.soft(body('/api/library/{world}')).toMatchObject({ id: worldId, name: 'Older Interface', plays: 1, world: { name: 'Older Interface' } });
    expect.soft(body('/api/worlds/{world}/updates?limit=5')).toEqual({ worldId, updates: [], nextCursor: null });
    expect.soft(list('/api/worlds/{world}/sessions', 'sessions').map((s) => s.id)).toEqual([sessionId]);
    expect.soft(keys(list('/api/worlds/{world}/sessions', 'sessions')[0])).toBe('createdAt,id,messageCount,title,updatedAt,worldId');
    expect.soft(body('/api/worlds/{world}/storage')).toEqual({ entries: { targets: JSON.stringify(targets) } });
    expect.soft(body('/api/worlds/{world}/player')).toMatchObject({ selectedModel: 'story-model', globalVariables: {} });
    expect.soft(keys(body('/api/worlds/{world}/player'))).toBe('globalVariables,preferredProvider,selectedModel,userPlan');
    const sessionPage = body('/api/sessions/{session}?limit=10') as { session?: { state?: object }; messages?: { id: string; content: string }[]; history?: unknown };
    const greeting = (await db.query<{ id: string; content: string }>('select id, content from chat_messages where session_id = $1 order by position limit 1', [sessionId])).rows[0]!;
    expect.soft(sessionPage.session).toMatchObject({ id: sessionId, worldId, messageCount: 1 });
    expect.soft(keys(sessionPage.session)).toBe('branchedFrom,createdAt,id,messageCount,state,title,updatedAt,worldId');
    expect.soft(keys(sessionPage.session?.state)).toMatch(/^(pendingChoices,)?variables$/);
    expect.soft(sessionPage.messages?.map((m) => [m.id, m.content])).toEqual([[greeting.id, greeting.content]]);
    expect.soft(sessionPage.history).toEqual({ earlierCursor: null, limit: 10 });
    expect.soft(body('/api/sessions/{session}/messages/{message}').message).toMatchObject({ id: greeting.id, content: greeting.content, swipesLoaded: true });
    expect.soft(list('/api/sessions/{session}/checkpoints', 'checkpoints').map((c) => c.name)).toEqual(['mine']);
    expect.soft(keys(list('/api/sessions/{session}/checkpoints', 'checkpoints')[0])).toBe('createdAt,id,messageCount,name');
    expect.soft(keys(body('/api/models'))).toBe('models,pinned,recent');
    expect.soft([...new Set(list('/api/models', 'models').map(keys))]).toEqual(['contextLength,id,name,provider']);

    // Everything else is refused in the page, before any request, with a message that says why;
    // a message id of another session on the open session's route reaches the server, which knows none.
    const serverRefused = 'GET /api/sessions/{session}/messages/{otherMessage}';
    expect.soft(attacks[serverRefused]).toMatch(/^answered 404 \{"error":\{"code":"NOT_FOUND","message":"No such message\."\}\}$/);
    const notRefused = Object.entries(attacks).filter(([what]) => what !== serverRefused).filter(([, result]) => !result.startsWith('refused TypeError FETCH_NOT_ALLOWED: Blocked by the Yumina sandbox: ')).map(([what, result]) => `${what} → ${result}`);
    expect.soft(notRefused).toEqual([]);
    expect.soft(Object.keys(attacks)).toHaveLength(COMPAT_ATTACKS.length);
    expect.soft(Object.values(reads).filter((r) => r.refused)).toEqual([]);
    expect.soft(attacks['GET /api/worlds/{otherWorld}']).toMatch(/only this world's routes are forwarded/);
    expect.soft(attacks['GET /api/sessions/{otherSession}']).toMatch(/only the open session's routes are forwarded/);
    expect.soft(attacks['GET /api/auth/session']).toMatch(/GET \/api\/auth\/session is not forwarded/);
    expect.soft(attacks['GET /api/worlds/{world}/../../account']).toMatch(/not in normal form/);
    expect.soft(attacks['GET /api/worlds/{world}/%2e%2e/%2e%2e/account']).toMatch(/percent-encoded/);
    expect.soft(attacks['DELETE /api/account']).toMatch(/DELETE is not forwarded: a world's interface only reads/);

    // No request went anywhere but the forwarded reads: no write, nothing of another world or session.
    const forbidden = [/^\S+ \/api\/(account|auth|settings|partners|me|personas|billing)\b/, new RegExp(`/${otherWorldId}\\b`), new RegExp(`/${targets.otherSession}\\b`), /%2[eEfF5]|\.\./];
    expect.soft(requests.filter((r) => forbidden.some((f) => f.test(r)))).toEqual([]);
    expect.soft(requests.filter((r) => !r.startsWith('GET '))).toEqual([]);
    // Nothing of the player changed.
    expect.soft(await snapshot()).toEqual(before);
    expect.soft(new URL(page.url()).pathname).toBe(`/play/${worldId}`);
    expect.soft(errors).toEqual([]);
    await context.close();
  }, 180_000);

  it('the server answers 404 for a world, session, message or checkpoint parameter that is not a platform id (hand-made paths)', async () => {
    const player = new CookieClient(server.url);
    expect((await signUp(server, player, { email: `raw-${Date.now()}@example.com`, password: 'long enough pw' })).status).toBe(201);
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
