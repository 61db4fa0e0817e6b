import type { Config } from '@yumina/config';
import { demoPartner, loadOrCreateSigningKeys, loadSigningKeys, type PartnerRegistry, parsePartners, type SigningKeySet } from '@yumina/identity';

export interface Partners {
  registry: PartnerRegistry;
  keys: SigningKeySet;
}

/** Signing keys from config, or (embedded default) generated once under the data folder. */
export async function loadKeys(config: Config): Promise<SigningKeySet> {
  const k = config.partners.signingKey;
  if (k) return loadSigningKeys({ current: k.current, next: k.next ?? null, previous: k.previous ? [k.previous] : [] });
  return loadOrCreateSigningKeys(config.dataDir);
}

/** Partners from PARTNERS, or the demo partner whose client runs on `demoClientOrigin`. */
export function loadRegistry(config: Config, demoClientOrigin: string | undefined): PartnerRegistry {
  if (config.partners.json) return parsePartners(config.partners.json);
  if (!demoClientOrigin) return new Map();
  const demo = demoPartner(config.publicOrigin, demoClientOrigin);
  return new Map([[demo.slug, demo]]);
}
