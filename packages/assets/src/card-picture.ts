import sharp, { type OutputInfo, type Sharp } from 'sharp';

/**
 * A character card's picture, sized for where the platform shows it (issue 31). Resizing runs in
 * sharp (libvips, prebuilt for each platform in its own registry package, no install step): its
 * work happens on libuv's thread pool, off the event loop, and it decodes PNG, JPEG, WebP, GIF
 * and AVIF alike. A picture larger than MAX_PIXELS is refused (a decompression bomb of a few
 * megabytes can otherwise ask for gigabytes).
 *
 *  - cover: the library card's 16:9 frame at twice its CSS width (640 × 360), cropped from the top
 *    of a portrait (where a character's face is) and from the middle of anything else;
 *  - avatar: the whole portrait, at most 512 × 768 (a character card's usual 2:3), never enlarged;
 *  - export picture: a PNG at most 1024 × 1536, for a card written by the export from the avatar
 *    when the world has no picture of its own (a card's, or an uploaded portrait's original), which
 *    the export embeds as it is (a PNG) or at its full size (fullSizePng).
 *
 * `cardPictures` decodes the picture once (to raw pixels at most 1280 px on a side) and makes both
 * sizes from that, so a 10 MB card costs one decode. libvips runs one thread per operation here
 * (sharp.concurrency(1)) and the process makes one card's pictures at a time (the others wait
 * their turn): a burst of imports then keeps one core busy with pictures, never all of them, and
 * the event loop keeps a core.
 */

sharp.concurrency(1);

export const MAX_PIXELS = 40_000_000;
export const COVER_SIZE = { width: 640, height: 360 } as const;
export const AVATAR_BOX = { width: 512, height: 768 } as const;

export interface SizedPicture {
  bytes: Uint8Array;
  contentType: string;
  width: number;
  height: number;
}

export class PictureError extends Error {
  readonly code = 'PICTURE_UNREADABLE';
}

const open = (bytes: Uint8Array) => sharp(bytes, { limitInputPixels: MAX_PIXELS, failOn: 'error', animated: false }).rotate();

async function output(pipeline: Sharp, contentType: string): Promise<SizedPicture> {
  try {
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true });
    return { bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength), contentType, width: info.width, height: info.height };
  } catch (error) {
    throw new PictureError(`the picture could not be read: ${(error as Error).message}`);
  }
}

async function sizeOf(bytes: Uint8Array): Promise<{ width: number; height: number }> {
  try {
    const meta = await sharp(bytes, { limitInputPixels: MAX_PIXELS }).metadata();
    if (!meta.width || !meta.height) throw new Error('no size');
    if (meta.width * meta.height > MAX_PIXELS) throw new Error(`${meta.width} × ${meta.height} is more than ${MAX_PIXELS.toLocaleString('en')} pixels`);
    // EXIF orientations 5–8 swap the sides.
    return meta.orientation && meta.orientation >= 5 ? { width: meta.height, height: meta.width } : { width: meta.width, height: meta.height };
  } catch (error) {
    throw new PictureError(`the picture could not be read: ${(error as Error).message}`);
  }
}

/** One card's pictures at a time in this process: the tail of the queue. */
let queue: Promise<unknown> = Promise.resolve();

/** Cover and avatar from one decode of the picture (one card at a time per process). */
export function cardPictures(bytes: Uint8Array): Promise<{ cover: SizedPicture; avatar: SizedPicture }> {
  const turn = queue.then(() => makeCardPictures(bytes));
  queue = turn.catch(() => undefined);
  return turn;
}

async function makeCardPictures(bytes: Uint8Array): Promise<{ cover: SizedPicture; avatar: SizedPicture }> {
  await sizeOf(bytes);
  let base: { data: Buffer; info: OutputInfo };
  try {
    base = await open(bytes).resize({ width: 1280, height: 1280, fit: 'inside', withoutEnlargement: true }).raw().toBuffer({ resolveWithObject: true });
  } catch (error) {
    throw new PictureError(`the picture could not be read: ${(error as Error).message}`);
  }
  const raw = { raw: { width: base.info.width, height: base.info.height, channels: base.info.channels } } as const;
  const position = base.info.height > base.info.width ? 'top' : 'centre';
  const cover = await output(sharp(base.data, raw).resize({ ...COVER_SIZE, fit: 'cover', position }).webp({ quality: 82 }), 'image/webp');
  const avatar = await output(sharp(base.data, raw).resize({ ...AVATAR_BOX, fit: 'inside', withoutEnlargement: true }).webp({ quality: 85 }), 'image/webp');
  return { cover, avatar };
}

/** The library card's cover: 640 × 360 WebP. */
export async function libraryCover(bytes: Uint8Array): Promise<SizedPicture> {
  const { width, height } = await sizeOf(bytes);
  const position = height > width ? 'top' : 'centre';
  return output(open(bytes).resize({ ...COVER_SIZE, fit: 'cover', position }).webp({ quality: 82 }), 'image/webp');
}

/** The character's avatar: the whole picture within 512 × 768, WebP. */
export async function characterAvatar(bytes: Uint8Array): Promise<SizedPicture> {
  await sizeOf(bytes);
  return output(open(bytes).resize({ ...AVATAR_BOX, fit: 'inside', withoutEnlargement: true }).webp({ quality: 85 }), 'image/webp');
}

/** A PNG for an exported card: the picture within 1024 × 1536 (as SillyTavern's cards are PNGs). */
export async function cardPicturePng(bytes: Uint8Array): Promise<SizedPicture> {
  await sizeOf(bytes);
  return output(open(bytes).resize({ width: 1024, height: 1536, fit: 'inside', withoutEnlargement: true }).png({ compressionLevel: 9 }), 'image/png');
}

/** A PNG of the whole picture at its own size (a portrait uploaded as JPEG or WebP, for a card export): no resizing, no crop. */
export async function fullSizePng(bytes: Uint8Array): Promise<SizedPicture> {
  await sizeOf(bytes);
  return output(open(bytes).png({ compressionLevel: 9 }), 'image/png');
}

/** A plain 400 × 600 PNG in the platform's accent colours, for exporting a world that has no picture. */
export async function placeholderCardPng(): Promise<Uint8Array> {
  const svg = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="600"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#5b3fd6"/><stop offset="1" stop-color="#c35bd6"/></linearGradient></defs><rect width="400" height="600" fill="url(#g)"/></svg>',
  );
  const data = await sharp(svg).png().toBuffer();
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}
