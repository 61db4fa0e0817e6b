import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchBrowser } from './browser.ts';
import { type FakeOpenAi, type FakeOpenAiOptions, startFakeOpenAi } from './fake-openai.ts';
import { startTestServer, type TestServer } from './server.ts';

export interface BrowserPlatform {
  /** The container serving the built web app, on a fresh database of the real PostgreSQL and the real Redis. */
  server: TestServer;
  /** Debian's Chromium. */
  browser: Browser;
  /** The loopback OpenAI-compatible provider, when the suite asked for one. */
  provider: FakeOpenAi;
}

/**
 * The common frame of a browser suite: registers beforeAll (server, Chromium and, when `provider`
 * is given, a fake OpenAI-compatible provider, started together) and afterAll (all of them closed).
 * `ready` receives them once started, to keep them in the suite's own variables and to finish the
 * suite's setup; whatever else the suite starts, it closes in an afterAll of its own.
 */
export function useBrowserPlatform(
  options: { env?: Record<string, string>; provider?: FakeOpenAiOptions },
  ready: (platform: BrowserPlatform) => unknown,
): void {
  let platform: Partial<BrowserPlatform> = {};
  beforeAll(async () => {
    const [server, browser, provider] = await Promise.all([
      startTestServer(options.env ?? {}, { web: true }),
      launchBrowser(),
      options.provider ? startFakeOpenAi(options.provider) : undefined,
    ]);
    platform = { server, browser, provider };
    await ready(platform as BrowserPlatform);
  }, 120_000);
  afterAll(async () => {
    await platform.browser?.close();
    // A request the closed page left open (a stream waiting on the provider) must not keep the
    // server from stopping: the provider goes at the same time, and connections still open after
    // 10 s are cut, as a deployment's stop timeout would.
    const { server, provider } = platform;
    const cut = setTimeout(() => server?.app.server.closeAllConnections(), 10_000);
    try {
      await Promise.all([server?.stop(), provider?.close()]);
    } finally {
      clearTimeout(cut);
    }
  });
}
