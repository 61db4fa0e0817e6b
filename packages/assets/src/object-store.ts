import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface StoredObject {
  key: string;
  bytes: Uint8Array;
  size: number;
  /** Strong validator: a hash of the bytes. */
  etag: string;
  contentType: string | undefined;
  lastModified: Date;
}

/** Object storage: S3 in production, a local folder in the embedded default. */
export interface ObjectStore {
  get(key: string): Promise<StoredObject | null>;
  put(key: string, bytes: Uint8Array, contentType?: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
}

export class InvalidKeyError extends Error {
  readonly code = 'INVALID_OBJECT_KEY';
  constructor(key: string) {
    super(`Invalid object key: ${JSON.stringify(key)}`);
  }
}

/**
 * A key is a '/'-separated relative path of ordinary segments: no empty, '.' or '..' segments,
 * no backslashes or control characters. Anything else could step out of its folder.
 */
export function isSafeKey(key: string): boolean {
  if (!key || key.length > 1024 || key.startsWith('/')) return false;
  if (/[\\\u0000-\u001f\u007f]/.test(key)) return false;
  return key.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

export const etagOf = (bytes: Uint8Array) => `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;

/** Objects as files under one folder; writes are atomic (temp file + rename). */
export class FolderObjectStore implements ObjectStore {
  readonly root: string;
  constructor(root: string) {
    this.root = resolve(root);
  }

  #path(key: string): string {
    if (!isSafeKey(key)) throw new InvalidKeyError(key);
    const path = resolve(this.root, key);
    if (!path.startsWith(this.root + sep)) throw new InvalidKeyError(key);
    return path;
  }

  async get(key: string): Promise<StoredObject | null> {
    if (!isSafeKey(key)) return null;
    const path = this.#path(key);
    try {
      const [bytes, info] = await Promise.all([readFile(path), stat(path)]);
      if (!info.isFile()) return null;
      let contentType: string | undefined;
      try {
        contentType = (await readFile(`${path}.__type`, 'utf8')).trim() || undefined;
      } catch {}
      return { key, bytes, size: bytes.length, etag: etagOf(bytes), contentType, lastModified: info.mtime };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'EISDIR') return null;
      throw err;
    }
  }

  async put(key: string, bytes: Uint8Array, contentType?: string): Promise<void> {
    const path = this.#path(key);
    await mkdir(dirname(path), { recursive: true });
    // A temporary file of this write's own ('wx': never one another write has open): two writes of
    // one key at once (identical uploads, named by their content) each rename a whole file into place.
    const replace = async (target: string, data: Uint8Array | string) => {
      const tmp = `${target}.${randomUUID()}.tmp`;
      try {
        await writeFile(tmp, data, { flag: 'wx' });
        await rename(tmp, target);
      } catch (err) {
        await rm(tmp, { force: true });
        throw err;
      }
    };
    if (contentType) await replace(`${path}.__type`, contentType);
    await replace(path, bytes);
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (!e.name.endsWith('.__type') && !e.name.endsWith('.tmp')) out.push(relative(this.root, p).split(sep).join('/'));
      }
    };
    await walk(this.root);
    return out.filter((k) => k.startsWith(prefix)).sort();
  }

  async delete(key: string): Promise<void> {
    const { rm } = await import('node:fs/promises');
    await rm(this.#path(key), { force: true });
    await rm(`${this.#path(key)}.__type`, { force: true });
  }
}
