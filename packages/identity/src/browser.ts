/**
 * Browser-safe entry (`@yumina/identity/browser`): no Node built-ins, no jose and no zod (the
 * partner-config schemas stay in the full entry), so a page bundle stays small. Use it from the
 * landing page and from a partner client bundle.
 */
export * from './account-match.ts';
export * from './bridge-controller.ts';
export * from './bridge-dom.ts';
export * from './bridge-messages.ts';
export * from './frame-client.ts';
export * from './identity-claims.ts';
export * from './landing-path.ts';
export type { PartnerPublicConfig } from './partner-config.ts';
export * from './partner-redirect.ts';
export * from './return-path.ts';
