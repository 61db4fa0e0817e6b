/**
 * Accounts and login sessions in PostgreSQL: the account record, the login session a cookie's
 * token stands for (sliding expiry), linked identities and random ids. The container and the
 * functions that need a login (partner-token, world-updates) use this one implementation.
 */
export * from './account.ts';
export * from './ids.ts';
export * from './sessions.ts';
