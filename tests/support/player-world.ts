import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { type MailServer, signUp } from './sign-up.ts';

/** A shipped sample world's definition (packages/world/samples/<name>.json). */
export function sampleWorld(name: string): Record<string, unknown> & { name: string } {
  return JSON.parse(readFileSync(new URL(`../../packages/world/samples/${name}.json`, import.meta.url), 'utf8'));
}

/**
 * In the page (already on the server's origin): signs a new player up (through the mailed link), connects the fake provider
 * as the player's own AI, optionally creates and activates a persona, and stores the worlds.
 * Returns the worlds' ids in order.
 */
export async function signUpWithWorlds(
  server: MailServer,
  page: Page,
  options: { providerUrl: string; apiKey: string; worlds: unknown[]; persona?: Record<string, string> },
): Promise<string[]> {
  // The account is made through the mailed link (verify-first sign-up): the page's context is signed in.
  await signUp(server, page);
  return page.evaluate(async ({ providerUrl, apiKey, worlds, persona }) => {
    const call = async (url: string, method: string, body?: unknown) => {
      const res = await fetch(url, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const json = await res.json();
      if (!res.ok) throw new Error(`${method} ${url}: ${JSON.stringify(json)}`);
      return json as Record<string, unknown>;
    };
    await call('/api/settings/ai', 'PUT', { baseUrl: providerUrl, defaultModel: 'story-model', apiKey });
    if (persona) {
      const created = await call('/api/personas', 'POST', persona);
      await call(`/api/personas/${created.id}/activate`, 'POST');
    }
    const ids: string[] = [];
    for (const world of worlds) ids.push((await call('/api/worlds', 'POST', { world })).id as string);
    return ids;
  }, options);
}
