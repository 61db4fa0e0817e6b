import { absolutePicture, linkedIdentities } from '@yumina/accounts';
import { isCrossSite, type LoginSettings, requestLogin } from '@yumina/http';
import type { PartnerRegistry } from '@yumina/identity';
import type { Store } from '@yumina/store';
import type { PartnerTokenPluginOptions } from './plugin.ts';

export interface PlatformTokenSettings {
  partners: PartnerRegistry;
  keys: PartnerTokenPluginOptions['keys'];
  /** The login session of the cookie, verified in PostgreSQL (@yumina/http requestLogin). */
  login: LoginSettings;
  store: Pick<Store, 'rateLimit'>;
  /** The platform origin: a browser request from any other origin is cross-site. */
  publicOrigin: string;
  tokensPerMinute: number;
}

/**
 * The plugin's hooks backed by the platform: the login session of the cookie and the account's
 * linked identities in PostgreSQL (an uploaded picture, a platform path, made an absolute URL), the per-account rate limit in the shared store, the cross-site
 * rule against the platform origin. The container (local mode) and the deployed function
 * (./handler.ts) build their options with this one function.
 */
export function platformTokenOptions(settings: PlatformTokenSettings): PartnerTokenPluginOptions {
  return {
    partners: settings.partners,
    keys: settings.keys,
    isCrossSite: (request) => isCrossSite(request, [settings.publicOrigin]),
    async authenticate(request) {
      const auth = await requestLogin(request, undefined, settings.login);
      if (!auth) return null;
      // An uploaded picture is a platform path; the token carries it as an absolute URL.
      const account = { ...auth.account, picture: absolutePicture(auth.account.picture, settings.publicOrigin) };
      return { account, sessionId: auth.session.id, identities: await linkedIdentities(settings.login.db, auth.account.id) };
    },
    async rateLimit(accountId) {
      const r = await settings.store.rateLimit(`partner-token:${accountId}`, settings.tokensPerMinute, 60);
      return { allowed: r.allowed, retryAfterSeconds: r.retryAfter };
    },
  };
}

