import { findAccount } from '@yumina/accounts';
import { createHash } from 'node:crypto';
import { PictureError, resizePicture } from '@yumina/assets';
import { HttpError, oneLineField, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { sniffAssetType } from '../studio/asset-type.ts';
import { requireAuth } from './auth.ts';
import { bodyAsItArrives } from '../body-bytes.ts';

/** The username rules partners' tokens document (docs/PARTNERS.md): a unique handle, as at sign-up. */
export const usernameField = z
  .string()
  .trim()
  .regex(/^[a-z0-9_]{3,30}$/, 'must be 3–30 lowercase letters, digits or underscores');
/** One line: line breaks and tabs become spaces, other control characters go (@yumina/http oneLineText). */
export const displayNameField = oneLineField(60);

const profileBody = z
  .strictObject({ displayName: displayNameField.optional(), username: usernameField.optional() })
  .refine((b) => b.displayName !== undefined || b.username !== undefined, 'name a displayName or a username to change');

/** Uploads up to 8 MiB; the stored picture is a 256 px WebP of a few KB. */
export const PICTURE_UPLOAD_BYTES = 8 * 1024 * 1024;
const PICTURE_PATH = '/api/account-pictures/';
const pictureKey = (accountId: string, file: string) => `pictures/${accountId}/${file}`;
const UPLOADED = /^\/api\/account-pictures\/(acc_[A-Za-z0-9_-]+)\/([a-f0-9]{32}\.webp)$/;

/**
 * The profile (issue 35, point 4): display name and username (PATCH /api/account/profile), and the
 * picture (POST /api/account/picture: an image checked by its content, resized to a 256 px WebP,
 * kept in the asset store; DELETE removes it). Partners see each change at their next token.
 */
export async function profileRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.patch('/api/account/profile', async (request, reply) => {
    const { account } = await requireAuth(ctx, request, reply);
    const body = parseWith(profileBody, request.body);
    try {
      await db.query('update accounts set display_name = coalesce($2, display_name), username = coalesce($3, username) where id = $1', [
        account.id,
        body.displayName ?? null,
        body.username ?? null,
      ]);
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      if (e.code === '23505' && e.constraint === 'accounts_username_key') throw new HttpError(409, 'USERNAME_TAKEN', 'This username is taken.');
      throw err;
    }
    return { account: await findAccount(db, account.id) };
  });

  await app.register(async (scope) => {
    // The picture is the request body itself, whatever type it declares: the content decides.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', bodyAsItArrives);
    scope.post('/api/account/picture', { bodyLimit: PICTURE_UPLOAD_BYTES }, async (request, reply) => {
      const { account } = await requireAuth(ctx, request, reply);
      const picture = await storePicture(ctx, account.id, request.body);
      await db.query('update accounts set picture = $2 where id = $1', [account.id, picture]);
      if (account.picture && account.picture !== picture) await removeUploaded(ctx, account.picture);
      reply.code(201);
      return { picture, account: await findAccount(db, account.id) };
    });
  });

  app.delete('/api/account/picture', async (request, reply) => {
    const { account } = await requireAuth(ctx, request, reply);
    await db.query('update accounts set picture = null where id = $1', [account.id]);
    if (account.picture) await removeUploaded(ctx, account.picture);
    return { account: await findAccount(db, account.id) };
  });

  /** Uploaded pictures are public (partners show them); the name is the content's hash, so they never change. */
  app.get<{ Params: { accountId: string; file: string } }>('/api/account-pictures/:accountId/:file', async (request, reply) => {
    const match = UPLOADED.exec(`${PICTURE_PATH}${request.params.accountId}/${request.params.file}`);
    const object = match ? await ctx.objects.get(pictureKey(match[1]!, match[2]!)) : null;
    if (!object) throw new HttpError(404, 'NOT_FOUND', 'No such picture.');
    return reply
      .type('image/webp')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('content-security-policy', "default-src 'none'; sandbox")
      .header('cross-origin-resource-policy', 'cross-origin')
      .send(Buffer.from(object.bytes));
  });
}

/**
 * An uploaded picture of an account (its profile picture, or a persona's avatar with `salt` = the
 * persona's id, so that each has a file of its own): checked by its content, resized to a 256 px
 * WebP without metadata, kept in the object store under the hash of what is stored; its public path.
 */
export async function storePicture(ctx: AppContext, accountId: string, bytes: unknown, salt = ''): Promise<string> {
  if (!Buffer.isBuffer(bytes) || bytes.length === 0) throw new HttpError(400, 'EMPTY_UPLOAD', 'Send the image as the request body.');
  if (sniffAssetType(bytes)?.kind !== 'image') throw new HttpError(415, 'UNSUPPORTED_PICTURE_TYPE', 'A picture must be a PNG, JPEG, GIF, WebP or AVIF image.');
  let resized: Buffer;
  try {
    resized = await resizePicture(bytes);
  } catch (err) {
    if (err instanceof PictureError) throw new HttpError(422, err.code, err.message);
    throw err;
  }
  const file = `${createHash('sha256').update(salt).update(resized).digest('hex').slice(0, 32)}.webp`;
  await ctx.objects.put(pictureKey(accountId, file), resized, 'image/webp');
  return `${PICTURE_PATH}${accountId}/${file}`;
}

/** Removes an uploaded picture of `accountId` (a link elsewhere, or another account's path, is left alone). */
export async function removeUploaded(ctx: AppContext, picture: string, accountId?: string): Promise<void> {
  const match = UPLOADED.exec(picture);
  if (match && (accountId === undefined || match[1] === accountId)) await ctx.objects.delete(pictureKey(match[1]!, match[2]!)).catch(() => {});
}
