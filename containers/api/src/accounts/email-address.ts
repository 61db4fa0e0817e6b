/**
 * E-mail addresses as accounts hold them. An address identifies at most one account, whatever its
 * letter case (the unique index accounts_email_key on lower(email), migration 088); an account
 * without one holds a placeholder under the reserved `.invalid` top-level domain (RFC 2606), which
 * no mailbox has and no sign-up may take.
 */

/** The placeholder domain of accounts without an address. */
export const NO_ADDRESS_DOMAIN = 'users.invalid';

/** The placeholder of an account without an address: unique, because the account id is. */
export const noAddress = (accountId: string): string => `${accountId}@${NO_ADDRESS_DOMAIN}`;

/** An address as accounts hold it and lookups compare it: trimmed, NFKC-normalized, lower case (as sign-up stores it). */
export const canonicalEmail = (raw: string): string => raw.trim().normalize('NFKC').toLowerCase();

/** An address under the reserved `.invalid` top-level domain: no mailbox, so never an account's own. */
export const isReservedAddress = (email: string): boolean => /\.invalid\.?$/i.test(email.trim());
