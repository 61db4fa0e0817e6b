import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { requireOrSkip } from './required.js';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM) || requireOrSkip(`Debian's Chromium at ${CHROMIUM}`, 'not installed (apt-get install -y chromium)');

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
