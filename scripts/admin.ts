/**
 * npm run admin -- grant <email>    makes the account with this e-mail an administrator
 * npm run admin -- revoke <email>   takes the role away
 * Uses the same configuration as the server (DATABASE_URL, or the embedded database under
 * DATA_DIR: stop `npm start` first then, the embedded database has one owner at a time).
 */
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@yumina/config';
import { openDatabase, runMigrations } from '@yumina/db';
import { repoRoot } from '../containers/api/src/web.ts';

const [action, email] = process.argv.slice(2);
if ((action !== 'grant' && action !== 'revoke') || !email || !email.includes('@')) {
  console.error('usage: npm run admin -- grant|revoke <email>');
  process.exit(2);
}
let code = 0;
try {
  const db = await openDatabase(loadConfig(process.env));
  try {
    await runMigrations(db.primary, join(repoRoot, 'migrations'));
    const { rows } = await db.primary.query<{ email: string; display_name: string }>(
      'update accounts set is_admin = $2 where lower(email) = lower($1) returning email, display_name',
      [email.trim(), action === 'grant'],
    );
    if (!rows.length) {
      console.error(`No account has the e-mail ${email}.`);
      code = 1;
    } else {
      for (const r of rows) console.log(`${r.display_name} <${r.email}> ${action === 'grant' ? 'is now an administrator' : 'is no longer an administrator'}.`);
    }
  } finally {
    await db.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `admin failed: ${(err as Error).message}`);
  code = 1;
}
process.exit(code);
