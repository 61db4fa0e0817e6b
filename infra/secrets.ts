/**
 * Secrets set with `npx sst secret set <Name> <value> --stage production` (docs/DEPLOY.md). Each is
 * linked to the processes that need it and read by packages/config through SST's `Resource`.
 * Those with a placeholder ('none', which config reads as unset) may stay unset.
 */
export const secrets = {
  secretsKey: new sst.Secret('SecretsKey'),
  identitySigningKey: new sst.Secret('IdentitySigningKey'),
  /** Key rotation (docs/PARTNERS.md): the staged next key and the retired previous key, published in the key set. */
  identitySigningKeyNext: new sst.Secret('IdentitySigningKeyNext', 'none'),
  identitySigningKeyPrevious: new sst.Secret('IdentitySigningKeyPrevious', 'none'),
  metricsToken: new sst.Secret('MetricsToken'),
  /** The PARTNERS JSON; its slugs also become landing routes of the router (infra/web.ts). */
  partners: new sst.Secret('Partners', '[]'),
  /** An optional read endpoint for public browsing (a postgres:// URL). */
  databaseReadUrl: new sst.Secret('DatabaseReadUrl', 'none'),
  /**
   * The proof that a request came through the Router (CloudFront): the Router adds it to every
   * request as a header, the load balancer forwards only requests that carry it, and the container
   * trusts X-Forwarded-For only from them (TRUST_PROXY_SECRET). No placeholder: a deploy stops
   * until it is set (`openssl rand -hex 32`).
   */
  trustProxySecret: new sst.Secret('TrustProxySecret'),
};
