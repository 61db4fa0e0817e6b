/**
 * Full entry (Node): everything in `./browser` plus the signer, key set and verifier.
 * Browser code imports `@yumina/identity/browser` instead.
 */
export * from './browser.ts';
export * from './errors.ts';
export * from './identity-token.ts';
export * from './jwks.ts';
export * from './partner-config.ts';
export * from './signing-keys.ts';
export * from './verifier.ts';
export * from './from-config.ts';
