import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium (package chromium), which the global setup installs when missing (./services.ts). */
export const CHROMIUM = '/usr/bin/chromium';

/** Debian's Chromium, headless, with the flags this closed network needs. */
export function launchBrowser(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
      ...extraArgs,
    ],
  });
}
