import { type Config, type FunctionSetting, type LinkedResources, loadFunctionConfig } from '@yumina/config';
import { type Database, openDatabase } from '@yumina/db';
import { openStore, type Store } from '@yumina/store';
import type { FastifyServerOptions } from 'fastify';

/**
 * What a deployed function opens once per cold start, through the same packages as the container:
 * its PostgreSQL pool (DATABASE_POOL_MAX connections, 2 per Lambda instance; through the RDS Proxy)
 * and the shared store (Redis, with the store's in-memory fallback while Redis is unreachable).
 * Only called with a configuration from loadFunctionConfig that required DATABASE_URL and
 * REDIS_URL, so a function never opens the embedded database or the in-memory store.
 */
export async function openFunctionResources(config: Config): Promise<{ db: Database; store: Store }> {
  if (!config.database.url || !config.store.redisUrl) throw new Error('a function opens PostgreSQL and Redis only from DATABASE_URL and REDIS_URL');
  const db = await openDatabase(config);
  try {
    return { db, store: await openStore(config.store.redisUrl, functionLog, config.store.prefix) };
  } catch (err) {
    await db.close();
    throw err;
  }
}

/** One JSON line per notice on stdout, which is the function's log (the store's fallback transitions). */
export const functionLog = {
  info: (fields: object, msg: string) => process.stdout.write(`${JSON.stringify({ level: 'info', ...fields, msg })}\n`),
  warn: (fields: object, msg: string) => process.stdout.write(`${JSON.stringify({ level: 'warn', ...fields, msg })}\n`),
};

/** A deployed function's Fastify options: its log is JSON lines at `warn` (5xx failures and the store's notices; refusals stay quiet). */
export const DEPLOYED_FUNCTION_SERVER: FastifyServerOptions = { logger: { level: 'warn' } };

/**
 * A deployed function's configuration (loadFunctionConfig), loaded at its first use and then kept;
 * a failure (a missing setting) is not kept, so the next invocation tries again. `source` and
 * `links` as loadFunctionConfig takes them (by default this process's environment and links).
 */
export function functionConfig(
  name: string,
  required: readonly FunctionSetting[],
  source?: Record<string, string | undefined>,
  links?: LinkedResources,
): () => Config {
  let loaded: Config | undefined;
  return () => (loaded ??= loadFunctionConfig(name, required, source, links));
}
