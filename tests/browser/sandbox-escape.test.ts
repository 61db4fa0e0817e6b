import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../support/server.ts';
import { useBrowserPlatform } from '../support/browser-platform.ts';

const WORLD_ID = '5e5c3a9b-0d1f-4e2a-9b8c-7d6e5f4a3b2c';
const OTHER_WORLD_ID = '00000000-0000-4000-8000-0000000000ff';

/**
 * World code that tries every escape of the acceptance list. Each attempt either returns (the
 * escape worked: "escaped") or throws / rejects ("blocked"); storage reads that come back without
 * the platform's secret throw on purpose, so "blocked" always means "the secret was not reached".
 */
function escapeWorld(otherOrigin: string) {
  const index = `
const OTHER = ${JSON.stringify(otherOrigin)};
const nestedWindow = () => {
  const frame = document.createElement('iframe');
  document.body.appendChild(frame);
  if (!frame.contentWindow) throw new Error('no nested window');
  return frame.contentWindow;
};
const mustBe = (value, secret) => { if (value !== secret) throw new Error('secret not visible: ' + String(value)); return value; };

const attempts = {
  'parent-document': () => window.parent.document.title,
  'top-document': () => window.top.document.cookie,
  'cookie-read': () => document.cookie,
  'cookie-write': () => { document.cookie = 'stolen=1'; return document.cookie; },
  'fetch-other-port': () => fetch(OTHER + '/shim-fetch').then((r) => r.text()),
  'native-fetch-other-port': () => nestedWindow().fetch(OTHER + '/native-fetch').then((r) => r.text()),
  'image-other-port': () => new Promise((resolve, reject) => { const img = new Image(); img.onload = () => resolve('loaded'); img.onerror = () => reject(new Error('image blocked')); img.src = OTHER + '/image'; }),
  'eval': () => eval('1'),
  'indirect-eval': () => (0, window.eval)('1'),
  'new-function': () => new Function('return 1')(),
  'timer-string': () => new Promise((resolve, reject) => { window.__timerRan = false; try { setTimeout('window.__timerRan = true', 0); } catch (e) { reject(e); return; } setTimeout(() => window.__timerRan ? resolve('ran') : reject(new Error('string timer did not run')), 50); }),
  'top-location': () => { top.location = OTHER + '/top-navigation'; return 'assigned'; },
  'top-location-href': () => { window.top.location.href = OTHER + '/top-href'; return 'assigned'; },
  'local-storage-platform-key': () => mustBe(localStorage.getItem('platform-secret'), 'platform-secret-value'),
  'local-storage-other-world': () => mustBe(localStorage.getItem('yumina:sandbox:${OTHER_WORLD_ID}:local:secret'), 'other-world-value'),
  'local-storage-native': () => mustBe(nestedWindow().localStorage.getItem('platform-secret'), 'platform-secret-value'),
  'local-storage-prototype': () => mustBe(Object.getOwnPropertyDescriptor(Window.prototype, 'localStorage').get.call(window).getItem('platform-secret'), 'platform-secret-value'),
  'fetch-api-not-forwarded': () => fetch('/api/auth/session').then((r) => r.text()),
  'fetch-api-other-world': () => fetch('/api/worlds/${OTHER_WORLD_ID}').then((r) => r.text()),
  'fetch-api-write': () => fetch('/api/worlds/${WORLD_ID}', { method: 'DELETE' }).then((r) => r.text()),
  'native-fetch-api': () => nestedWindow().fetch('/api/version').then((r) => r.text()),
  'xhr': () => { const x = new XMLHttpRequest(); x.open('GET', '/api/version', false); x.send(); return x.responseText; },
  'native-xhr': () => { const X = nestedWindow().XMLHttpRequest; const x = new X(); x.open('GET', OTHER + '/native-xhr', false); x.send(); return x.responseText; },
  'session-storage': () => mustBe(sessionStorage.getItem('platform-session-secret'), 'platform-session-value'),
  'session-storage-native': () => mustBe(nestedWindow().sessionStorage.getItem('platform-session-secret'), 'platform-session-value'),
  'websocket': () => new Promise((resolve, reject) => { const ws = new WebSocket(OTHER.replace('http', 'ws')); ws.onopen = () => resolve('open'); ws.onerror = () => reject(new Error('ws blocked')); }),
  'event-source': () => new Promise((resolve, reject) => { const es = new EventSource(OTHER + '/event-source'); es.onopen = () => resolve('open'); es.onerror = () => { es.close(); reject(new Error('event source blocked')); }; }),
  'forged-proxy-request': () => new Promise((resolve, reject) => {
    // learn the channel from a genuine response, then ask the parent to fetch a route it must refuse
    const learn = (e) => {
      if (!e.data || !e.data.channel || e.data.type !== 'response') return;
      window.removeEventListener('message', learn);
      const channel = e.data.channel;
      const answer = (r) => {
        if (!r.data || r.data.id !== 987654) return;
        window.removeEventListener('message', answer);
        r.data.ok ? resolve('parent fetched: ' + JSON.stringify(r.data.value).slice(0, 60)) : reject(new Error(r.data.error.code + ': ' + r.data.error.message));
      };
      window.addEventListener('message', answer);
      window.parent.postMessage({ yumina: 1, channel, type: 'request', id: 987654, method: 'fetch', args: [{ url: '/api/auth/session', method: 'GET', headers: [], body: null }] }, '*');
    };
    window.addEventListener('message', learn);
    window.yumina.showToast('hello');
  }),
  'open-popup': () => { const w = window.open(OTHER + '/popup'); if (!w) throw new Error('popup blocked'); return 'opened'; },
};

/* Requests that report nothing back: the other server's hit log shows whether they left. */
const fireAndForget = () => {
  try { navigator.sendBeacon(OTHER + '/beacon', 'x'); } catch {}
  try { const l = document.createElement('link'); l.rel = 'stylesheet'; l.href = OTHER + '/style.css'; document.head.appendChild(l); } catch {}
  try { const s = document.createElement('script'); s.src = OTHER + '/script.js'; document.head.appendChild(s); } catch {}
  try { const a = document.createElement('audio'); a.src = OTHER + '/sound.ogg'; a.load(); } catch {}
  try { const f = document.createElement('form'); f.action = OTHER + '/form'; f.method = 'POST'; document.body.appendChild(f); f.submit(); } catch {}
};

/* The shims still work for what they allow. */
const allowed = {
  'shim-fetch-forwarded': () => fetch('/api/version').then((r) => r.json()).then((j) => String(j.version)),
  'shim-local-storage-own-key': () => mustBe(localStorage.getItem('mine'), 'own-value'),
  'shim-local-storage-write': () => { localStorage.setItem('written', 'by-world'); return localStorage.getItem('written'); },
  'shim-session-storage-write': () => { sessionStorage.setItem('s-written', 'by-world'); return sessionStorage.getItem('s-written'); },
  'shim-location': () => location.pathname,
};

async function run(table) {
  const out = {};
  for (const [name, attempt] of Object.entries(table)) {
    try {
      const value = await Promise.race([
        Promise.resolve().then(attempt),
        new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 3000)),
      ]);
      out[name] = 'escaped: ' + String(value).slice(0, 80);
    } catch (error) {
      out[name] = 'blocked: ' + (error && error.name ? error.name + ': ' : '') + String(error && error.message || error).slice(0, 120);
    }
  }
  return out;
}

export default function Escape() {
  const [results, setResults] = React.useState(null);
  React.useEffect(() => {
    (async () => {
      fireAndForget();
      const attempted = await run(attempts);
      const shims = await run(allowed);
      setResults({ attempted, shims });
    })();
  }, []);
  if (!results) return <p>running</p>;
  return <pre data-testid="results">{JSON.stringify(results)}</pre>;
}
`;
  return {
    id: WORLD_ID,
    name: 'Escape artist',
    rootComponent: { id: '1a2b3c4d-0000-4000-8000-000000000002', name: 'Escapes', entryFile: 'index.tsx', updatedAt: 1, files: { 'index.tsx': index } },
  };
}

const ESCAPES = [
  'parent-document',
  'top-document',
  'cookie-read',
  'cookie-write',
  'fetch-other-port',
  'native-fetch-other-port',
  'image-other-port',
  'eval',
  'indirect-eval',
  'new-function',
  'timer-string',
  'top-location',
  'top-location-href',
  'local-storage-platform-key',
  'local-storage-other-world',
  'local-storage-native',
  'local-storage-prototype',
  'fetch-api-not-forwarded',
  'fetch-api-other-world',
  'fetch-api-write',
  'native-fetch-api',
  'xhr',
  'native-xhr',
  'session-storage',
  'session-storage-native',
  'websocket',
  'event-source',
  'forged-proxy-request',
  'open-popup',
];

describe('sandbox escape attempts, run as world code', () => {
  let server: TestServer;
  let browser: Browser;
  let other: Server;
  let otherOrigin: string;
  const otherHits: string[] = [];
  useBrowserPlatform({}, (p) => ({ server, browser } = p));
  beforeAll(async () => {
    other = createServer((req, res) => {
      otherHits.push(req.url ?? '');
      res.writeHead(200, { 'access-control-allow-origin': '*', 'content-type': 'text/plain' });
      res.end('reached');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherOrigin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => other?.close(resolve));
  });

  it('every escape fails, nothing reaches another origin, and the shims serve only their scope', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(40_000);
    await page.context().addCookies([{ name: 'platform_cookie', value: 'cookie-secret', url: server.url }]);
    const pageUrl = `${server.url}/dev/sandbox`;
    const events: string[] = [];
    page.on('pageerror', (e) => events.push(`pageerror: ${e.message}`));
    page.on('response', (r) => {
      if (r.status() >= 400) events.push(`http ${r.status()} ${r.url()}`);
    });
    await page.goto(pageUrl);
    await page
      .getByTestId('sandbox-frame')
      .waitFor()
      .catch(async (error: Error) => {
        throw new Error(`${error.message}\n${(await page.content()).slice(0, 2000)}\n${events.join('\n')}`);
      });
    await page.evaluate(
      ({ worldId, otherWorldId }) => {
        localStorage.setItem('platform-secret', 'platform-secret-value');
        localStorage.setItem(`yumina:sandbox:${otherWorldId}:local:secret`, 'other-world-value');
        localStorage.setItem(`yumina:sandbox:${worldId}:local:mine`, 'own-value');
        sessionStorage.setItem('platform-session-secret', 'platform-session-value');
      },
      { worldId: WORLD_ID, otherWorldId: OTHER_WORLD_ID },
    );
    await page.evaluate((world) => window.yuminaDev!.setWorld(world), escapeWorld(otherOrigin));
    const frame = page.frameLocator('[data-testid=sandbox-frame]');
    const text = await frame
      .getByTestId('results')
      .textContent({ timeout: 40_000 })
      .catch(async (error: Error) => {
        const diagnostics = await page.evaluate(() => ({ page: document.querySelector('main')?.textContent, frameErrors: window.yuminaDev?.frameErrors }));
        throw new Error(`${error.message}\n${JSON.stringify(diagnostics)}`);
      });
    if (process.env.SANDBOX_DEBUG) console.log(text);
    const results = JSON.parse(text ?? '{}') as { attempted: Record<string, string>; shims: Record<string, string> };

    for (const name of ESCAPES) expect(results.attempted[name], name).toMatch(/^blocked: /);
    expect(Object.keys(results.attempted).sort()).toEqual([...ESCAPES].sort());
    // the refusals come from the browser or the sandbox, not from a server that answered (a nested
    // window — a fresh realm — is refused by the frame runtime since issue 18, before the browser's own refusal)
    expect(results.attempted['parent-document']).toMatch(/SecurityError/);
    expect(results.attempted['cookie-read']).toMatch(/SecurityError/);
    expect(results.attempted.eval).toMatch(/EvalError/);
    expect(results.attempted['new-function']).toMatch(/EvalError/);
    expect(results.attempted['local-storage-native']).toMatch(/SecurityError|nested frames are not available/);
    expect(results.attempted['session-storage-native']).toMatch(/SecurityError|nested frames are not available/);
    expect(results.attempted['native-fetch-api']).toMatch(/SecurityError|nested frames are not available/);
    expect(results.attempted['fetch-api-not-forwarded']).toMatch(/GET \/api\/auth\/session is not forwarded/);
    expect(results.attempted['forged-proxy-request']).toMatch(/FETCH_NOT_ALLOWED/);
    expect(results.attempted['top-location']).toMatch(/SecurityError/);

    // nothing left the frame for another origin, and the page was not navigated
    await new Promise((r) => setTimeout(r, 300));
    expect(otherHits).toEqual([]);
    expect(page.url()).toBe(pageUrl);
    expect(await page.getByTestId('sandbox-frame').count()).toBe(1);

    // the shims work within their scope: a forwarded /api/ read, the world's own storage keys, synthetic location
    expect(results.shims['shim-fetch-forwarded']).toMatch(/^escaped: \d/);
    expect(results.shims['shim-local-storage-own-key']).toBe('escaped: own-value');
    expect(results.shims['shim-local-storage-write']).toBe('escaped: by-world');
    expect(results.shims['shim-session-storage-write']).toBe('escaped: by-world');
    expect(results.shims['shim-location']).toBe('escaped: /dev/sandbox');
    const stored = await page.evaluate(
      (worldId) => ({
        local: localStorage.getItem(`yumina:sandbox:${worldId}:local:written`),
        session: sessionStorage.getItem(`yumina:sandbox:${worldId}:session:s-written`),
        platformUntouched: localStorage.getItem('platform-secret'),
      }),
      WORLD_ID,
    );
    expect(stored).toEqual({ local: 'by-world', session: 'by-world', platformUntouched: 'platform-secret-value' });
    const cookies = await page.context().cookies(server.url);
    expect(cookies.map((c) => c.name)).toEqual(['platform_cookie']);
    await page.close();
  }, 90_000);
});
