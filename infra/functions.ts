import { FUNCTION_ROUTES, type FunctionName } from './routes';
import { secrets } from './secrets';
import { vpc } from './network';

/** Per Lambda instance; with reserved concurrency this bounds what the functions may open. */
export const LAMBDA_POOL_MAX = 2;
export const LAMBDA_RESERVED_CONCURRENCY = 50;

/**
 * Every function path of the route table (infra/routes.ts) as its own Lambda, each the `handler`
 * export of functions/<name>/handler.ts. `pg` stays external in the bundles. Their configuration
 * comes from links through the same loader as the container (packages/config); they are not the
 * container, so they do not run in container mode.
 */
const common = {
  vpc,
  runtime: 'nodejs22.x' as const,
  nodejs: { install: ['pg'] },
  environment: { NODE_ENV: 'production', DATABASE_POOL_MAX: String(LAMBDA_POOL_MAX) },
  concurrency: { reserved: LAMBDA_RESERVED_CONCURRENCY },
  timeout: '30 seconds' as const,
  url: true,
};

/** What each function needs linked. */
const links: Record<FunctionName, unknown[]> = {
  jwks: [secrets.identitySigningKey, secrets.identitySigningKeyNext, secrets.identitySigningKeyPrevious],
  worldValidate: [],
};

const componentName = (name: string) => name[0]!.toUpperCase() + name.slice(1);

export const functions = Object.fromEntries(
  FUNCTION_ROUTES.map((route) => [
    route.function,
    new sst.aws.Function(componentName(route.function), { ...common, handler: route.handler, link: links[route.function] }),
  ]),
) as Record<FunctionName, sst.aws.Function>;
/*
 * partner-config, partner-token and world-updates are functions too (plugin + handler, each tested
 * through a Lambda event), but production serves them from the container: partner-token and
 * world-updates need the platform login session, which lives in the container, and partner-config
 * shares the /api/partners prefix with partner-token.
 */
