// The container's health check (Dockerfile HEALTHCHECK, infra/api.ts): does this process answer?
// GET /health/live touches no database, store or provider, so a dependency outage never makes the
// orchestrator kill a replica (the load balancer's check on /health takes it out of rotation instead).
// Plain JavaScript run by `node` (the image has no wget or curl); exits 0 when answered 200.
const port = process.env.PORT || '3000';
const deadline = AbortSignal.timeout(4000);
fetch(`http://127.0.0.1:${port}/health/live`, { signal: deadline }).then(
  (res) => process.exit(res.status === 200 ? 0 : 1),
  () => process.exit(1),
);
