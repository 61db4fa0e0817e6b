import { type MailServer, type SignedUp, type SignUpClient, type SignUpDetails, signUp } from '../tests/support/sign-up.ts';

/**
 * How a benchmark makes an account: the tests' one way (tests/support/sign-up.ts: the sign-up,
 * then the link mailed to the address, followed by the same client, which it signs in), also on a
 * baseline, an older revision of the server (./baseline.ts) whose sign-up still answered 201 and
 * signed in at once: that answer is taken as it is. `server` names where the server's mail lands
 * (its DATA_DIR, or its outbox folder: none for a baseline without mail). Always outside the timed part.
 */
export function benchSignUp(server: MailServer, client: SignUpClient, details: SignUpDetails = {}): Promise<SignedUp> {
  return signUp(server, client, { ...details, acceptSignedInAtOnce: true });
}
