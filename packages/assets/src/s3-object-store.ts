import type { S3Client } from '@aws-sdk/client-s3';
import { etagOf, InvalidKeyError, isSafeKey, type ObjectStore, type StoredObject } from './object-store.ts';

type Sdk = typeof import('@aws-sdk/client-s3');
let sdk: Promise<Sdk> | undefined;
/** The AWS SDK (about 800 KB of code) loads with the first request to the bucket, not when the process starts. */
const loadSdk = (): Promise<Sdk> => (sdk ??= import('@aws-sdk/client-s3'));

/** The production object store: one S3 bucket (linked by SST), keys as in the folder store. */
export class S3ObjectStore implements ObjectStore {
  #client: Promise<S3Client> | undefined;
  constructor(
    readonly bucket: string,
    client?: S3Client,
  ) {
    if (client) this.#client = Promise.resolve(client);
  }

  /** The client and the SDK's commands. */
  async #s3(): Promise<{ client: S3Client; commands: Sdk }> {
    const commands = await loadSdk();
    this.#client ??= Promise.resolve(new commands.S3Client({}));
    return { client: await this.#client, commands };
  }

  async get(key: string): Promise<StoredObject | null> {
    if (!isSafeKey(key)) return null;
    const { client, commands } = await this.#s3();
    try {
      const res = await client.send(new commands.GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = await res.Body!.transformToByteArray();
      return { key, bytes, size: bytes.length, etag: etagOf(bytes), contentType: res.ContentType, lastModified: res.LastModified ?? new Date(0) };
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') return null;
      throw err;
    }
  }

  async put(key: string, bytes: Uint8Array, contentType?: string): Promise<void> {
    if (!isSafeKey(key)) throw new InvalidKeyError(key);
    const { client, commands } = await this.#s3();
    await client.send(new commands.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType }));
  }

  async list(prefix: string): Promise<string[]> {
    const { client, commands } = await this.#s3();
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const res = await client.send(new commands.ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of res.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    const { client, commands } = await this.#s3();
    await client.send(new commands.DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}
