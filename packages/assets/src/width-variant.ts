import sharp from 'sharp';

/** Larger sources are not decoded (a decompression bomb in 8 MB): the caller sends the original instead. */
const MAX_INPUT_PIXELS = 40_000_000;

/**
 * An uploaded image at most `width` pixels wide (never enlarged), turned upright by its EXIF
 * orientation, as a WebP: the variant a cover or avatar is drawn from in a box far smaller than the
 * upload (issue 32; the container's studio/image-variants.ts stores one per width it serves).
 * sharp decodes and encodes on libuv's threads, not the event loop. Null when the source cannot be
 * read (damaged, or larger than 40 megapixels).
 */
export async function widthVariant(bytes: Uint8Array, width: number): Promise<Buffer | null> {
  try {
    return await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize({ width, withoutEnlargement: true })
      .webp({ quality: 78, effort: 4 })
      .toBuffer();
  } catch {
    return null;
  }
}
