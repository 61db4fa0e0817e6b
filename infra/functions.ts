import { vpc } from './network';
import { secrets } from './secrets';

/**
 * Every stateless handler as its own Lambda. `pg` stays external in the bundles; functions that
 * reach Postgres go through the RDS Proxy with a pool of at most 2 per instance, and reserved
 * concurrency bounds how many instances exist (docs/OPERATIONS.md).
 */
const common = {
  vpc,
  runtime: 'nodejs22.x' as const,
  nodejs: { install: ['pg'] },
  environment: { DATABASE_POOL_MAX: '2', APP_MODE: 'container' },
  concurrency: { reserved: 50 },
  timeout: '30 seconds' as const,
};

export const functions = {
  jwks: new sst.aws.Function('Jwks', {
    ...common,
    handler: 'functions/jwks/handler.handler',
    link: [secrets.identitySigningKey],
    environment: { ...common.environment, IDENTITY_SIGNING_KEY: secrets.identitySigningKey.value },
  }),
  worldValidate: new sst.aws.Function('WorldValidate', { ...common, handler: 'functions/world-validate/handler.handler' }),
};
/*
 * partner-config, partner-token and world-updates are functions too (plugin + handler, each tested
 * through a Lambda event), but production serves them from the container: partner-token and
 * world-updates need the platform login session, which lives in the container, and partner-config
 * shares the /api/partners prefix with partner-token.
 */
