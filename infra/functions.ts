import { existsSync } from 'node:fs';
import { database, LAMBDA_POOL_MAX, LAMBDA_RESERVED_CONCURRENCY } from './database';
import { vpc } from './network';
import { FUNCTION_TRUST_PROXY } from './proxy-proof';
import { publicOrigin } from './router';
import { BUNDLE_HANDLER, FUNCTION_ROUTES, type FunctionName, type FunctionRoute, functionBundle } from './routes';
import { secrets } from './secrets';
import { store } from './store';

export { LAMBDA_POOL_MAX, LAMBDA_RESERVED_CONCURRENCY };

/**
 * Every handler of the design card (infra/routes.ts FUNCTION_ROUTES) as its own Lambda: the
 * bundle `npm run build` made of functions/<folder>/handler.ts (dist/functions/<folder>, plain
 * JavaScript with its dependencies inside; SST zips it as it is and does not build again). Each
 * gets what its settings need, through links that packages/config reads (the database through
 * the RDS Proxy, the store, the secrets) and PUBLIC_ORIGIN; none gets more. A missing one fails
 * its cold start with a line naming it. Each is linked to the TrustProxySecret: its Function URL
 * is public, and it answers only requests that carry the Router's proof (infra/proxy-proof.ts).
 */
const common = {
  vpc,
  runtime: 'nodejs22.x' as const,
  architecture: 'arm64' as const,
  memory: '1024 MB' as const,
  environment: { NODE_ENV: 'production' },
  concurrency: { reserved: LAMBDA_RESERVED_CONCURRENCY },
  timeout: '30 seconds' as const,
  url: true,
};

/** The links and environment that provide each setting a function may require. */
const provides = {
  DATABASE_URL: { link: [database], environment: { DATABASE_POOL_MAX: String(LAMBDA_POOL_MAX) } },
  REDIS_URL: { link: [store] },
  IDENTITY_SIGNING_KEY: { link: [secrets.identitySigningKey, secrets.identitySigningKeyNext, secrets.identitySigningKeyPrevious] },
  PARTNERS: { link: [secrets.partners] },
  PUBLIC_ORIGIN: { environment: { PUBLIC_ORIGIN: publicOrigin } },
  // The Router's proof: a function refuses a request without it, and trusts the one hop in front (CloudFront) to name the client.
  TRUST_PROXY_SECRET: { link: [secrets.trustProxySecret], environment: { TRUST_PROXY: FUNCTION_TRUST_PROXY } },
} satisfies Record<FunctionRoute['settings'][number], { link?: unknown[]; environment?: Record<string, unknown> }>;

const componentName = (name: string) => name[0]!.toUpperCase() + name.slice(1);

function lambda(route: FunctionRoute): sst.aws.Function {
  if (!existsSync(`${functionBundle(route)}/handler.mjs`)) {
    throw new Error(`${functionBundle(route)}/handler.mjs is missing: run \`npm run build\` before deploying (docs/DEPLOY.md)`);
  }
  const given = route.settings.map((s) => provides[s] as { link?: unknown[]; environment?: Record<string, $util.Input<string>> });
  return new sst.aws.Function(componentName(route.function), {
    ...common,
    bundle: functionBundle(route),
    handler: BUNDLE_HANDLER,
    link: given.flatMap((g) => g.link ?? []),
    environment: Object.assign({}, common.environment, ...given.map((g) => g.environment ?? {})),
  });
}

export const functions = Object.fromEntries(FUNCTION_ROUTES.map((route) => [route.function, lambda(route)])) as Record<FunctionName, sst.aws.Function>;
