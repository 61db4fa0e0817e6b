/**
 * npm run admin -- grant <e-mail | account id>    makes that one account an administrator
 * npm run admin -- revoke <e-mail | account id>   takes the role away
 * An e-mail names the account that holds the address (any letter case; one account at most, and
 * never by an address a sign-in provider did not vouch for). When it names none, or several (data
 * older than that rule), nothing changes: the command says so, naming the candidates' ids, and
 * exits 1. What changed is printed: the account's id, e-mail and display name.
 * Uses the same configuration as the server (DATABASE_URL, or the embedded database under
 * DATA_DIR: stop `npm start` first then, the embedded database has one owner at a time).
 */
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@yumina/config';
import { openDatabase, runMigrations } from '@yumina/db';
import { HttpError } from '@yumina/http';
import { findAccountByHandle } from '../containers/api/src/accounts/lookup.ts';
import { repoRoot } from '../containers/api/src/web.ts';

const [action, handle] = process.argv.slice(2);
if ((action !== 'grant' && action !== 'revoke') || !handle?.trim()) {
  console.error('usage: npm run admin -- grant|revoke <e-mail | account id>');
  process.exit(2);
}
let code = 0;
try {
  const db = await openDatabase(loadConfig(process.env));
  try {
    await runMigrations(db.primary, join(repoRoot, 'migrations'));
    const target = await findAccountByHandle(db.primary, handle, { names: false });
    await db.primary.query('update accounts set is_admin = $2 where id = $1', [target.id, action === 'grant']);
    const verified = target.emailVerified ? '' : ' (e-mail not verified)';
    console.log(`${target.displayName} <${target.email}>${verified}, account ${target.id}, ${action === 'grant' ? 'is now an administrator' : 'is no longer an administrator'}.`);
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError || err instanceof HttpError ? err.message : `admin failed: ${(err as Error).message}`);
  code = 1;
}
process.exit(code);
