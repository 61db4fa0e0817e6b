import { SESSION_COOKIE } from '@yumina/accounts';
import { type Config, type FunctionSetting, loadFunctionConfig } from '@yumina/config';
import { crossSiteGuard, DEPLOYED_FUNCTION_SERVER, lambdaHandler, type LoginSettings, openFunctionResources, requestLogin } from '@yumina/http';
import type { FastifyServerOptions } from 'fastify';
import plugin, { type WorldUpdatesOptions } from './plugin.ts';

/**
 * The Lambda entry: the same plugin behind @fastify/aws-lambda. The deployment supplies the
 * options (database pool, store, session lookup) once per cold start; no route logic here.
 */
export function createHandler(loadOptions: () => WorldUpdatesOptions | Promise<WorldUpdatesOptions>, server?: FastifyServerOptions) {
  return lambdaHandler(plugin, loadOptions, server);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN'] as const satisfies readonly FunctionSetting[];

/**
 * The deployed options: the PostgreSQL pool and Redis store, the login session of the cookie
 * verified in PostgreSQL with sliding expiry (@yumina/http requestLogin, as the container does),
 * and the container's cross-site guard for the writes.
 */
export async function deployedOptions(config: Config): Promise<WorldUpdatesOptions> {
  const { db, store } = await openFunctionResources(config);
  const login: LoginSettings = { db: db.primary, sessionTtlDays: config.auth.sessionTtlDays, secureCookies: config.auth.secureCookies };
  return {
    db,
    store,
    async authenticate(request, reply) {
      const auth = await requestLogin(request, reply, login);
      return auth ? { accountId: auth.account.id, isAdmin: auth.account.isAdmin } : null;
    },
    preHandler: crossSiteGuard({ cookieName: SESSION_COOKIE, allowedOrigins: [config.publicOrigin] }),
  };
}

/** The deployed entry (FUNCTION_ROUTES' handler). */
export const handler = createHandler(() => deployedOptions(loadFunctionConfig('world-updates', SETTINGS)), DEPLOYED_FUNCTION_SERVER);
