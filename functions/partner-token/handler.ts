import type { FunctionSetting } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, functionConfig, lambdaHandler, openFunctionResources, type ProxyTrust, proxyTrustOf } from '@yumina/http';
import { partnersFromConfig, signingKeysFromConfig } from '@yumina/identity';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '@yumina/config';
import { platformTokenOptions } from './options.ts';
import { type PartnerTokenPluginOptions, partnerTokenPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options (and the Router's proof) once per cold start. */
export function createHandler(loadOptions: () => PartnerTokenPluginOptions | Promise<PartnerTokenPluginOptions>, server?: FastifyServerOptions, proxy?: () => ProxyTrust) {
  return lambdaHandler(partnerTokenPlugin, loadOptions, server, proxy);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'IDENTITY_SIGNING_KEY', 'PARTNERS', 'TRUST_PROXY_SECRET'] as const satisfies readonly FunctionSetting[];

/**
 * The deployed options: partners from PARTNERS, keys from the signing-key secrets (never
 * generated), the login session verified in PostgreSQL and the rate limit in Redis, through the
 * same code the container uses (./options.ts).
 */
export async function deployedOptions(config: Config): Promise<PartnerTokenPluginOptions> {
  const partners = partnersFromConfig(config);
  const keys = await signingKeysFromConfig(config, { allowGenerated: false });
  const { db, store } = await openFunctionResources(config);
  return platformTokenOptions({
    partners,
    keys,
    login: { db: db.primary, sessionTtlDays: config.auth.sessionTtlDays, secureCookies: config.auth.secureCookies },
    store,
    publicOrigin: config.publicOrigin,
    tokensPerMinute: config.partners.tokenRateLimitPerMinute,
  });
}

const config = functionConfig('partner-token', SETTINGS);
/**
 * The deployed entry (FUNCTION_ROUTES' handler): only requests through the Router are answered, and
 * the client address a login records is the one the Router's hop names (TRUST_PROXY), as in the container.
 */
export const handler = createHandler(() => deployedOptions(config()), DEPLOYED_FUNCTION_SERVER, () => proxyTrustOf(config()));
