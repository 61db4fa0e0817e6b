import type { PartnerRegistry, SigningKeySet } from '@yumina/identity';

export { partnersFromConfig as loadRegistry, signingKeysFromConfig as loadKeys } from '@yumina/identity';

export interface Partners {
  registry: PartnerRegistry;
  keys: SigningKeySet;
}
