import type { Config } from '@yumina/config';
import { demoPartner, type PartnerRegistry, parsePartners } from './partner-config.ts';
import { loadOrCreateSigningKeys, loadSigningKeys, type SigningKeySet } from './signing-keys.ts';

/** Signing keys from IDENTITY_SIGNING_KEY(_NEXT, _PREVIOUS), or (embedded default) generated once under the data folder. */
export async function signingKeysFromConfig(config: Config, options: { allowGenerated?: boolean } = {}): Promise<SigningKeySet> {
  const k = config.partners.signingKey;
  if (k) return loadSigningKeys({ current: k.current, next: k.next ?? null, previous: k.previous ? [k.previous] : [] });
  if (options.allowGenerated === false) throw new Error('IDENTITY_SIGNING_KEY is not set');
  return loadOrCreateSigningKeys(config.dataDir);
}

/** Partners from PARTNERS, or the demo partner whose client runs on `demoClientOrigin`. */
export function partnersFromConfig(config: Config, demoClientOrigin?: string): PartnerRegistry {
  if (config.partners.json) return parsePartners(config.partners.json);
  if (!demoClientOrigin) return new Map();
  const demo = demoPartner(config.publicOrigin, demoClientOrigin);
  return new Map([[demo.slug, demo]]);
}
