import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { etagOf, InvalidKeyError, isSafeKey, type ObjectStore, type StoredObject } from './object-store.ts';

/** The production object store: one S3 bucket (linked by SST), keys as in the folder store. */
export class S3ObjectStore implements ObjectStore {
  readonly #client: S3Client;
  constructor(
    readonly bucket: string,
    client?: S3Client,
  ) {
    this.#client = client ?? new S3Client({});
  }

  async get(key: string): Promise<StoredObject | null> {
    if (!isSafeKey(key)) return null;
    try {
      const res = await this.#client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = await res.Body!.transformToByteArray();
      return { key, bytes, size: bytes.length, etag: etagOf(bytes), contentType: res.ContentType, lastModified: res.LastModified ?? new Date(0) };
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') return null;
      throw err;
    }
  }

  async put(key: string, bytes: Uint8Array, contentType?: string): Promise<void> {
    if (!isSafeKey(key)) throw new InvalidKeyError(key);
    await this.#client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentType: contentType }));
  }

  async list(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const res = await this.#client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of res.Contents ?? []) if (o.Key) keys.push(o.Key);
      token = res.IsTruncated ? res.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  async delete(key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}
