import { objects } from './assets';
import { connectionBudget, database, DATABASE_MAX_CONNECTIONS } from './database';
import { email } from './email';
import { vpc } from './network';
import { PROXY_SECRET_HEADER, publicOrigin } from './router';
import { secrets } from './secrets';
import { store } from './store';

export const cluster = new sst.aws.Cluster('Cluster', { vpc });

/**
 * At least two replicas in one region (seed 000 §1), each with the seed's pool caps; more as the
 * load asks, up to `API_MAX_REPLICAS` (a deploy-time setting, 6 by default): the database's
 * connection budget (infra/database.ts) is sized for the maximum (tests/infra.test.ts).
 */
export const POOL = { primary: 100, read: 80 };
export const REPLICAS = { min: 2, max: maxReplicas(process.env.API_MAX_REPLICAS) };
/**
 * What scales the service (target tracking, docs/OPERATIONS.md "Autoscaling"): average CPU and
 * memory of the replicas, and the load balancer's requests per replica per minute. Out fast (a
 * minute apart), in slowly (five minutes apart): a replica scaled in drains first (below).
 */
export const SCALING = { cpuUtilization: 60, memoryUtilization: 75, requestCount: 3000, scaleOutCooldown: '60 seconds', scaleInCooldown: '300 seconds' } as const;
/**
 * A replica leaving (scale-in, deployment) stops getting new requests at once; the load balancer
 * waits this long for the requests it has before ECS sends SIGTERM. The server then finishes its
 * replies in flight and ends its watching streams with a `reconnect` event (their clients resume
 * elsewhere) within SHUTDOWN_GRACE_MS, under ECS's 30 s stop timeout.
 */
export const DEREGISTRATION_DELAY_SECONDS = 20;
export const SHUTDOWN_GRACE_MS = 25_000;
export const STOP_TIMEOUT_SECONDS = 30;

export function maxReplicas(value: string | undefined): number {
  if (value === undefined || value === '') return 6;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 2) throw new Error(`API_MAX_REPLICAS must be a whole number of at least 2 (got ${JSON.stringify(value)}).`);
  const budget = connectionBudget(n, POOL.primary + POOL.read);
  if (budget >= DATABASE_MAX_CONNECTIONS)
    throw new Error(`API_MAX_REPLICAS=${n} could open ${budget} database connections, not below the database's ${DATABASE_MAX_CONNECTIONS} (infra/database.ts): raise max_connections (and the instance) first.`);
  return n;
}
export const CONTAINER_PORT = 3000;
export const HEALTH_CHECK_GRACE_SECONDS = 60;

/**
 * The long-lived server (containers/api). It reads its database, store, bucket, mail sender and
 * keys from the links below (packages/config maps them); container mode refuses to start without them.
 *
 * Health as seed 000 §4 defines it: the load balancer's target health and the deployment checks
 * use GET /health (readiness); there is no container health check, so nothing restarts a task
 * because of GET /health/live, which stays diagnostic only. ECS replaces a task whose process
 * exits (docs/OPERATIONS.md: what restarts a replica, what takes it out of rotation).
 */
export const api = new sst.aws.Service('Api', {
  cluster,
  image: { context: '.', dockerfile: 'containers/api/Dockerfile' },
  link: [
    database,
    store,
    objects,
    // Amazon SES: the container sends every mail (packages/mail), with the link's sender and permissions.
    email,
    secrets.secretsKey,
    secrets.identitySigningKey,
    secrets.identitySigningKeyNext,
    secrets.identitySigningKeyPrevious,
    secrets.metricsToken,
    secrets.partners,
    secrets.databaseReadUrl,
    secrets.trustProxySecret,
  ],
  scaling: { min: REPLICAS.min, max: REPLICAS.max, ...SCALING },
  cpu: '1 vCPU',
  memory: '2 GB',
  loadBalancer: {
    // Only requests that came through the Router carry its proof; anything else (a client that
    // found the load balancer's address) gets the listener's default answer, 403.
    rules: [
      {
        listen: '80/http',
        forward: `${CONTAINER_PORT}/http`,
        conditions: { header: { name: PROXY_SECRET_HEADER, values: [secrets.trustProxySecret.value] } },
      },
    ],
    health: {
      [`${CONTAINER_PORT}/http`]: { path: '/health', interval: '10 seconds', timeout: '6 seconds', healthyThreshold: 2, unhealthyThreshold: 2 },
    },
  },
  transform: {
    // ECS ignores the load balancer's verdict on a new task for this long: a first start applies
    // the migrations before /health can answer.
    service: (args) => {
      args.healthCheckGracePeriodSeconds = HEALTH_CHECK_GRACE_SECONDS;
    },
    target: (args) => {
      args.deregistrationDelay = DEREGISTRATION_DELAY_SECONDS;
    },
  },
  environment: {
    APP_MODE: 'container',
    NODE_ENV: 'production',
    PORT: String(CONTAINER_PORT),
    REGION: $app.stage,
    DEPLOYMENT_ID: $app.stage,
    PUBLIC_ORIGIN: publicOrigin,
    // Requests arrive through CloudFront and then the load balancer: the client address is two hops
    // back, and only for a request carrying the Router's proof (TRUST_PROXY_SECRET, linked above);
    // any other request is its direct peer's.
    TRUST_PROXY: '2',
    DATABASE_POOL_MAX: String(POOL.primary),
    DATABASE_READ_POOL_MAX: String(POOL.read),
    // Drain in-flight requests within ECS's 30 s stop timeout (SIGTERM, then SIGKILL).
    SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS),
  },
});
