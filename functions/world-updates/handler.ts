import { SESSION_COOKIE } from '@yumina/accounts';
import type { Config, FunctionSetting } from '@yumina/config';
import {
  crossSiteGuard,
  DEPLOYED_FUNCTION_SERVER,
  functionConfig,
  lambdaHandler,
  type LoginSettings,
  openFunctionResources,
  type ProxyTrust,
  proxyTrustOf,
  requestLogin,
} from '@yumina/http';
import type { FastifyServerOptions } from 'fastify';
import plugin, { type WorldUpdatesOptions } from './plugin.ts';

/**
 * The Lambda entry: the same plugin behind @fastify/aws-lambda. The deployment supplies the
 * options (database pool, store, session lookup) once per cold start; no route logic here.
 */
export function createHandler(loadOptions: () => WorldUpdatesOptions | Promise<WorldUpdatesOptions>, server?: FastifyServerOptions, proxy?: () => ProxyTrust) {
  return lambdaHandler(plugin, loadOptions, server, proxy);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'TRUST_PROXY_SECRET'] as const satisfies readonly FunctionSetting[];

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

const config = functionConfig('world-updates', SETTINGS);
/** The deployed entry (FUNCTION_ROUTES' handler): only requests through the Router are answered. */
export const handler = createHandler(() => deployedOptions(config()), DEPLOYED_FUNCTION_SERVER, () => proxyTrustOf(config()));
