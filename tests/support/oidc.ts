import { OAuth2Server } from 'oauth2-mock-server';

/**
 * A real OAuth2/OIDC provider on loopback (oauth2-mock-server): authorize (redirects straight back
 * with a code, as a provider does for a user who already consented), token with PKCE checked,
 * JWKS-signed id_tokens. `identity` decides the next id_token's subject, e-mail, whether the
 * provider says the e-mail is verified (`email_verified`, true unless `emailVerified: false`) and name.
 */
export interface LoopbackOidc {
  server: OAuth2Server;
  identity: { sub: string; email: string; name: string; emailVerified?: boolean };
  /** Server environment turning "Sign in with Google" on against this provider. */
  env(): Record<string, string>;
  stop(): Promise<void>;
}

export async function startLoopbackOidc(): Promise<LoopbackOidc> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate('RS256');
  await server.start(0, '127.0.0.1');
  const issuer = server.issuer.url!;
  const oidc: LoopbackOidc = {
    server,
    identity: { sub: 'oidc-sub-1', email: 'oidc@example.com', name: 'Oidc User' },
    env: () => ({
      OAUTH_GOOGLE_CLIENT_ID: 'google-client',
      OAUTH_GOOGLE_CLIENT_SECRET: 'secret',
      OAUTH_GOOGLE_AUTHORIZE_URL: `${issuer}/authorize`,
      OAUTH_GOOGLE_TOKEN_URL: `${issuer}/token`,
      OAUTH_GOOGLE_USERINFO_URL: `${issuer}/userinfo`,
      OAUTH_GOOGLE_ISSUER: issuer,
      OAUTH_GOOGLE_JWKS_URL: `${issuer}/jwks`,
    }),
    stop: () => server.stop(),
  };
  server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    if (token.payload.aud === 'google-client') {
      const { sub, email, name, emailVerified = true } = oidc.identity;
      Object.assign(token.payload, { sub, email, email_verified: emailVerified, name });
    }
  });
  return oidc;
}
