/**
 * npm run game:publish -- <build dir> [--game <name>] [--api <platform origin>]
 * Uploads a game build to the game object store (GAMES_BUCKET, or DATA_DIR/objects locally) in the
 * safe order: checks the platform API answers, then hashed JS and WASM, other assets, HTML last.
 */
import { existsSync } from 'node:fs';
import { publishGame } from '@yumina/assets';
import { ConfigError, loadConfig } from '@yumina/config';
import { openObjectStore, readBuild } from '../containers/api/src/games/demo.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args.splice(i, 2)[1] : undefined;
};
const game = flag('game') ?? 'demo';
const api = flag('api');
const dir = args[0];
if (!dir || !existsSync(dir)) {
  console.error(dir ? `No such build folder: ${dir}` : 'usage: npm run game:publish -- <build dir> [--game <name>] [--api <platform origin>]');
  process.exit(2);
}
try {
  const config = loadConfig(process.env);
  const uploaded = await publishGame(openObjectStore(config), game, await readBuild(dir), {
    checkApi: api
      ? async () => {
          const res = await fetch(new URL('/api/version', api), { signal: AbortSignal.timeout(10_000) });
          if (!res.ok) throw new Error(`GET /api/version answered ${res.status}`);
        }
      : undefined,
    onUpload: (key) => console.log(`uploaded ${key}`),
  });
  console.log(`published ${uploaded.length} files of ${game}`);
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `publish failed: ${(err as Error).message}`);
  process.exit(1);
}
