import { objects } from './assets';
import { database } from './database';
import { vpc } from './network';
import { secrets } from './secrets';
import { store } from './store';

export const cluster = new sst.aws.Cluster('Cluster', { vpc });

/**
 * The long-lived server (containers/api): two replicas in one region. Deployments wait for
 * GET /health (readiness); /health/live is diagnostic only, not a restart policy.
 */
export const api = new sst.aws.Service('Api', {
  cluster,
  image: { context: '.', dockerfile: 'containers/api/Dockerfile' },
  link: [database, store, objects, secrets.secretsKey, secrets.identitySigningKey, secrets.metricsToken],
  scaling: { min: 2, max: 2 },
  cpu: '1 vCPU',
  memory: '2 GB',
  health: {
    command: ['CMD-SHELL', 'wget -qO- http://localhost:3000/health || exit 1'],
    interval: '10 seconds',
    timeout: '6 seconds',
    retries: 3,
    startPeriod: '60 seconds',
  },
  loadBalancer: {
    rules: [{ listen: '80/http', forward: '3000/http' }],
    health: { '3000/http': { path: '/health', interval: '10 seconds', timeout: '6 seconds' } },
  },
  environment: {
    APP_MODE: 'container',
    PORT: '3000',
    REGION: $app.stage,
    DEPLOYMENT_ID: $app.stage,
    GAMES_BUCKET: objects.name,
    // config reads the environment once at start (packages/config); secrets come from SST.
    SECRETS_KEY: secrets.secretsKey.value,
    IDENTITY_SIGNING_KEY: secrets.identitySigningKey.value,
    METRICS_TOKEN: secrets.metricsToken.value,
  },
});
