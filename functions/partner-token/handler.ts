import { type FunctionSetting, loadFunctionConfig } from '@yumina/config';
import { DEPLOYED_FUNCTION_SERVER, lambdaHandler, openFunctionResources } from '@yumina/http';
import { partnersFromConfig, signingKeysFromConfig } from '@yumina/identity';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '@yumina/config';
import { platformTokenOptions } from './options.ts';
import { type PartnerTokenPluginOptions, partnerTokenPlugin } from './plugin.ts';

/** The Lambda entry: the plugin behind @fastify/aws-lambda; the deployment supplies the options once per cold start. */
export function createHandler(loadOptions: () => PartnerTokenPluginOptions | Promise<PartnerTokenPluginOptions>, server?: FastifyServerOptions) {
  return lambdaHandler(partnerTokenPlugin, loadOptions, server);
}

/** What the deployed function cannot start without (infra/routes.ts links the same). */
export const SETTINGS = ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'IDENTITY_SIGNING_KEY', 'PARTNERS'] as const satisfies readonly FunctionSetting[];

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

/** The deployed entry (FUNCTION_ROUTES' handler). */
export const handler = createHandler(() => deployedOptions(loadFunctionConfig('partner-token', SETTINGS)), DEPLOYED_FUNCTION_SERVER);
