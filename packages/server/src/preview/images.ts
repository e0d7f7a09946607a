import { spawn } from 'node:child_process';
import sharp from 'sharp';
import { AppError } from '../errors.js';

export type PreviewSize = 'thumb' | 'big';

/** Formats sharp decodes from its bundled libvips. GIFs are left alone to keep their animation. */
export const RESIZABLE = new Set([
  '.jpg',
  '.jpeg',
  '.jpe',
  '.jfif',
  '.png',
  '.tif',
  '.tiff',
  '.bmp',
  '.webp',
  '.avif',
]);
export const MAX_DIMENSION = 10_000;

const THUMB = 256;
const BIG = 1080;

/** A JPEG preview of an image file: thumbnails fill 256×256, big previews fit inside 1080×1080. */
export async function resizeImage(file: string, size: PreviewSize): Promise<Buffer> {
  let meta: sharp.Metadata;
  try {
    meta = await sharp(file, { limitInputPixels: false }).metadata();
  } catch {
    throw new AppError('internal', 'the image could not be decoded');
  }
  if ((meta.width ?? 0) > MAX_DIMENSION || (meta.height ?? 0) > MAX_DIMENSION) {
    throw new AppError(
      'payload_too_large',
      `the image is larger than ${MAX_DIMENSION} pixels in one dimension`,
    );
  }
  const image = sharp(file, { limitInputPixels: false, failOn: 'none' }).rotate();
  const resized =
    size === 'thumb'
      ? image.resize(THUMB, THUMB, { fit: 'cover', position: 'attention' })
      : image.resize(BIG, BIG, { fit: 'inside', withoutEnlargement: true });
  return resized
    .flatten({ background: '#ffffff' })
    .jpeg({ quality: size === 'thumb' ? 75 : 85, mozjpeg: false })
    .toBuffer();
}

/** A frame from a video through the system's ffmpeg, then resized like an image. */
export async function videoFrame(ffmpeg: string, file: string, size: PreviewSize): Promise<Buffer> {
  const frame = await new Promise<Buffer>((resolve, reject) => {
    const child = spawn(
      ffmpeg,
      [
        '-v',
        'error',
        '-ss',
        '1',
        '-i',
        file,
        '-frames:v',
        '1',
        '-f',
        'image2pipe',
        '-vcodec',
        'png',
        'pipe:1',
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    const chunks: Buffer[] = [];
    let total = 0;
    child.stdout.on('data', (c: Buffer) => {
      total += c.length;
      if (total > 64 * 1024 * 1024) child.kill('SIGKILL');
      else chunks.push(c);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0 && total > 0) resolve(Buffer.concat(chunks));
      else reject(new AppError('internal', 'no frame could be read from the video'));
    });
  });
  const image = sharp(frame);
  const resized =
    size === 'thumb'
      ? image.resize(THUMB, THUMB, { fit: 'cover' })
      : image.resize(BIG, BIG, { fit: 'inside', withoutEnlargement: true });
  return resized.jpeg({ quality: 80 }).toBuffer();
}

/** The system's ffmpeg, when it is on the PATH. */
export async function findFfmpeg(pathEnv: string): Promise<string | undefined> {
  const { access, constants } = await import('node:fs/promises');
  for (const dir of pathEnv.split(':').filter(Boolean)) {
    const candidate = `${dir}/ffmpeg`;
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
