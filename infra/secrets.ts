/** Secrets set with `npx sst secret set <Name> <value> --stage production`. */
export const secrets = {
  secretsKey: new sst.Secret('SecretsKey'),
  identitySigningKey: new sst.Secret('IdentitySigningKey'),
  metricsToken: new sst.Secret('MetricsToken'),
};
