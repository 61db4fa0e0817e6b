import sharp from 'sharp';

/**
 * A profile picture as the platform keeps it: a square WebP of PICTURE_SIZE pixels, cropped to
 * the middle, turned upright by its EXIF orientation and stripped of its metadata (a phone photo's
 * location never leaves with it). One frame of an animation. Decoding stops beyond 40 megapixels,
 * so a small file that claims a huge image (a decompression bomb) is refused, not decoded.
 * (Small and separate on purpose: the card importer's image resizing may share it later.)
 */
export const PICTURE_SIZE = 256;
const MAX_INPUT_PIXELS = 40_000_000;

export class PictureError extends Error {
  readonly code = 'UNREADABLE_PICTURE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PictureError';
  }
}

export async function resizePicture(bytes: Uint8Array, size = PICTURE_SIZE): Promise<Buffer> {
  try {
    return await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', animated: false })
      .rotate()
      .resize(size, size, { fit: 'cover', position: 'centre' })
      .webp({ quality: 82 })
      .toBuffer();
  } catch (err) {
    throw new PictureError('This image could not be read (it may be damaged, or larger than 40 megapixels).', { cause: err });
  }
}
