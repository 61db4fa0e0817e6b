import { contentTypeFor, isHtml } from './content-type.ts';
import { isSafeKey, type ObjectStore } from './object-store.ts';

export interface GameFile {
  /** Path inside the build, '/'-separated, e.g. `assets/main.3f2a1b9c.js`. */
  path: string;
  bytes: Uint8Array;
}

export interface PublishOptions {
  /** Called first: throws when the platform API this build talks to is not deployed yet. */
  checkApi?: () => Promise<void>;
  onUpload?: (key: string) => void;
}

export class PublishError extends Error {
  readonly code = 'GAME_PUBLISH_FAILED';
}

/** The object key of a game file. */
export const gameKey = (game: string, path: string) => `games/${game}/${path}`;

/** Upload order: every non-HTML file (hashed JS, WASM, other assets) first, the HTML entry points last. */
export function uploadOrder(files: GameFile[]): GameFile[] {
  const rank = (f: GameFile) => (isHtml(f.path) ? 2 : /\.(js|mjs|wasm)$/i.test(f.path) ? 0 : 1);
  return [...files].sort((a, b) => rank(a) - rank(b) || a.path.localeCompare(b.path));
}

/**
 * Publishes a game build so that a player never loads an HTML page whose assets are missing:
 * the API must already answer, then hashed JS and WASM, other assets, and the HTML last.
 */
export async function publishGame(store: ObjectStore, game: string, files: GameFile[], options: PublishOptions = {}): Promise<string[]> {
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(game)) throw new PublishError(`Invalid game name ${JSON.stringify(game)}`);
  const bad = files.find((f) => !isSafeKey(f.path));
  if (bad) throw new PublishError(`Invalid file path in build: ${JSON.stringify(bad.path)}`);
  if (!files.some((f) => isHtml(f.path))) throw new PublishError('The build has no HTML entry point');
  if (options.checkApi) {
    try {
      await options.checkApi();
    } catch (err) {
      throw new PublishError(`The platform API is not deployed or not reachable; deploy it before the game (${(err as Error).message})`);
    }
  }
  const uploaded: string[] = [];
  for (const file of uploadOrder(files)) {
    const key = gameKey(game, file.path);
    await store.put(key, file.bytes, contentTypeFor(file.path));
    options.onUpload?.(key);
    uploaded.push(key);
  }
  return uploaded;
}
