import { database } from './database';
import { vpc } from './network';
import { secrets } from './secrets';
import { store } from './store';

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
  partnerConfig: new sst.aws.Function('PartnerConfig', { ...common, handler: 'functions/partner-config/handler.handler' }),
  jwks: new sst.aws.Function('Jwks', { ...common, handler: 'functions/jwks/handler.handler', link: [secrets.identitySigningKey] }),
  partnerToken: new sst.aws.Function('PartnerToken', {
    ...common,
    handler: 'functions/partner-token/handler.handler',
    link: [database, store, secrets.identitySigningKey],
  }),
  worldUpdates: new sst.aws.Function('WorldUpdates', {
    ...common,
    handler: 'functions/world-updates/handler.handler',
    link: [database, store],
  }),
  worldValidate: new sst.aws.Function('WorldValidate', { ...common, handler: 'functions/world-validate/handler.handler' }),
};
