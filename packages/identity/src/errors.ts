/** Every failure of this package is one of these classes, each with a stable string `code`. */

export class IdentityError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Partner configuration failed validation (names the first bad field). */
export class PartnerConfigError extends IdentityError {
  constructor(message: string) {
    super('PARTNER_CONFIG_INVALID', message);
  }
}

/** Signing key material could not be loaded, parsed or persisted. */
export class SigningKeyError extends IdentityError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SIGNING_KEY_INVALID', message, options);
  }
}

/** Signing failed for a reason that may go away (crypto backend, key store). Maps to 503. */
export class SigningUnavailableError extends IdentityError {
  constructor(message = 'identity token signing is temporarily unavailable', options?: { cause?: unknown }) {
    super('IDENTITY_SIGNING_UNAVAILABLE', message, options);
  }
}

export type TokenRejectionReason =
  | 'malformed'
  | 'algorithm'
  | 'unknown_key'
  | 'signature'
  | 'expired'
  | 'not_yet_valid'
  | 'issuer'
  | 'audience'
  | 'claims'
  | 'key_set_unavailable';

/** The partner-side verifier refused a token. It always fails closed: no partial identity. */
export class IdentityTokenRejectedError extends IdentityError {
  constructor(
    readonly reason: TokenRejectionReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('IDENTITY_TOKEN_REJECTED', message, options);
  }
}
