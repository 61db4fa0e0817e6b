import { readdir, readFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { FolderObjectStore, type GameFile, gameKey, type ObjectStore, publishGame, S3ObjectStore } from '@yumina/assets';
import type { Config } from '@yumina/config';
import { repoRoot } from '../web.ts';

export const DEMO_GAME_DIR = resolve(repoRoot, 'containers/api/demo-game');

export function openObjectStore(config: Config): ObjectStore {
  return config.gamesBucket ? new S3ObjectStore(config.gamesBucket) : new FolderObjectStore(join(config.dataDir, 'objects'));
}

/** Reads a build folder as the files to publish (paths '/'-separated, relative to the folder). */
export async function readBuild(dir: string): Promise<GameFile[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: GameFile[] = [];
  for (const e of entries) {
    if (!e.isFile()) continue;
    const full = resolve(e.parentPath, e.name);
    files.push({ path: relative(resolve(dir), full).split(sep).join('/'), bytes: await readFile(full) });
  }
  return files;
}

/** Local mode: the demo game is published into the local object store, through the same upload tool, when missing or changed. */
export async function publishDemoGame(objects: ObjectStore, log: { info(o: object, m: string): void }): Promise<void> {
  const files = await readBuild(DEMO_GAME_DIR);
  const html = files.find((f) => f.path === 'index.html');
  const current = await objects.get(gameKey('demo', 'index.html'));
  if (current && html && Buffer.compare(Buffer.from(current.bytes), Buffer.from(html.bytes)) === 0) return;
  await publishGame(objects, 'demo', files);
  log.info({ type: 'startup' }, 'Demo game published to /games/demo/');
}
