import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type sharpModule from 'sharp';
import type { Metadata } from 'sharp';
import { AppError } from '../errors.js';
import { descriptorPath } from '../files/access/anchor.js';

type Sharp = typeof sharpModule;
let loading: Promise<Sharp> | undefined;

/**
 * sharp and its libvips (18 MB of the server's memory) are loaded with the first preview, not
 * at start: many servers make none for hours, and some never (`--disableThumbnails`).
 */
function loadSharp(): Promise<Sharp> {
  loading ??= import('sharp').then(({ default: sharp }) => {
    // libvips caches operations by their arguments, file names included. Previews open files
    // through their descriptors' paths (`descriptorPath`), names that are reused for other
    // files, so a cached load could answer with the wrong image. Each image is resized once and then served from the disk
    // cache: nothing is lost.
    sharp.cache(false);
    return sharp;
  });
  return loading;
}

export type PreviewSize = 'thumb' | 'big';

/**
 * Extensions sharp decodes from its bundled libvips and that are worth resizing. Everything else
 * that is an image is served as it is: GIF (resizing would lose the animation), SVG (already
 * scalable, and rendering it server-side is attack surface), BMP, HEIC and ICO (the bundled
 * libvips cannot decode them).
 */
export const RESIZABLE = new Set([
  '.jpg',
  '.jpeg',
  '.jpe',
  '.jfif',
  '.png',
  '.tif',
  '.tiff',
  '.webp',
  '.avif',
]);
export const MAX_DIMENSION = 10_000;

export const THUMB_SIZE = 256;
export const BIG_SIZE = 1080;

export interface PreviewImage {
  data: Buffer;
  /** `image/jpeg`, or `image/png` for a big preview of an image with transparency. */
  type: string;
}

function tooLarge(): AppError {
  return new AppError(
    'payload_too_large',
    `the image is larger than ${MAX_DIMENSION} pixels in one dimension`,
  );
}

/**
 * A preview of an image file: thumbnails fill 256×256 (centre crop) as JPEG, big previews fit
 * inside 1080×1080 as JPEG (PNG when the image has transparency). EXIF orientation is applied.
 * `input` is a path sharp can open (see `readablePath`).
 */
export async function resizeImage(input: string, size: PreviewSize): Promise<PreviewImage> {
  const sharp = await loadSharp();
  let meta: Metadata;
  try {
    meta = await sharp(input, { limitInputPixels: false }).metadata();
  } catch {
    throw new AppError('internal', 'the image could not be decoded');
  }
  if ((meta.width ?? 0) > MAX_DIMENSION || (meta.height ?? 0) > MAX_DIMENSION) throw tooLarge();
  const image = sharp(input, {
    limitInputPixels: MAX_DIMENSION * MAX_DIMENSION,
    failOn: 'none',
  }).rotate();
  try {
    if (size === 'thumb') {
      const data = await image
        .resize(THUMB_SIZE, THUMB_SIZE, { fit: 'cover', position: 'centre' })
        .flatten({ background: '#ffffff' })
        .jpeg({ quality: 75 })
        .toBuffer();
      return { data, type: 'image/jpeg' };
    }
    const fitted = image.resize(BIG_SIZE, BIG_SIZE, { fit: 'inside', withoutEnlargement: true });
    if (meta.hasAlpha) return { data: await fitted.png().toBuffer(), type: 'image/png' };
    return { data: await fitted.jpeg({ quality: 85 }).toBuffer(), type: 'image/jpeg' };
  } catch {
    throw new AppError('internal', 'the image could not be decoded');
  }
}

/** Resizes a decoded video frame like an image (always JPEG). */
async function resizeFrame(frame: Buffer, size: PreviewSize): Promise<PreviewImage> {
  const sharp = await loadSharp();
  const image = sharp(frame);
  const resized =
    size === 'thumb'
      ? image.resize(THUMB_SIZE, THUMB_SIZE, { fit: 'cover', position: 'centre' })
      : image.resize(BIG_SIZE, BIG_SIZE, { fit: 'inside', withoutEnlargement: true });
  return {
    data: await resized.flatten({ background: '#000000' }).jpeg({ quality: 80 }).toBuffer(),
    type: 'image/jpeg',
  };
}

const FRAME_LIMIT = 64 * 1024 * 1024;
/** The descriptor number ffmpeg gets the opened video as (see the `stdio` of `grabFrame`). */
const FFMPEG_INPUT_FD = 3;
const FFMPEG_TIME_LIMIT_MS = 20_000;

/** Runs ffmpeg once to get one PNG frame at `seconds` into the video; empty when there is none. */
function grabFrame(ffmpeg: string, input: VideoInput, seconds: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const source = `file:${input.fd === undefined ? input.path : descriptorPath(FFMPEG_INPUT_FD, 'child')}`;
    const child = spawn(
      ffmpeg,
      [
        '-nostdin',
        '-v',
        'error',
        '-ss',
        String(seconds),
        '-i',
        source,
        '-frames:v',
        '1',
        '-f',
        'image2pipe',
        '-vcodec',
        'png',
        'pipe:1',
      ],
      {
        // The already opened, already checked file goes to ffmpeg as its descriptor 3 (the first
        // after stdin, stdout and stderr), named in ffmpeg's own /proc/self: nothing is
        // looked up by name again, so a link swapped in since the check is never followed.
        stdio: ['ignore', 'pipe', 'ignore', ...(input.fd === undefined ? [] : [input.fd])],
        env: { PATH: process.env.PATH ?? '' },
      },
    );
    const chunks: Buffer[] = [];
    let total = 0;
    child.stdout!.on('data', (c: Buffer) => {
      total += c.length;
      if (total > FRAME_LIMIT) child.kill('SIGKILL');
      else chunks.push(c);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), FFMPEG_TIME_LIMIT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(code === 0 && total <= FRAME_LIMIT ? Buffer.concat(chunks) : Buffer.alloc(0));
    });
  });
}

export interface VideoInput {
  /** Real path of the video (used by name only where descriptors cannot be passed on). */
  path: string;
  /** An open descriptor of it, handed to ffmpeg. */
  fd?: number;
}

/**
 * A frame from a video through the system's ffmpeg, then resized like an image. The frame is taken
 * one second in, or from the start for videos shorter than that.
 */
export async function videoFrame(
  ffmpeg: string,
  input: VideoInput,
  size: PreviewSize,
): Promise<PreviewImage> {
  let frame = await grabFrame(ffmpeg, input, 1);
  if (frame.length === 0) frame = await grabFrame(ffmpeg, input, 0);
  if (frame.length === 0) throw new AppError('internal', 'no frame could be read from the video');
  try {
    return await resizeFrame(frame, size);
  } catch {
    throw new AppError('internal', 'no frame could be read from the video');
  }
}

/** The first executable `ffmpeg` in a PATH-style list of folders (only absolute folders count). */
export async function findFfmpeg(pathEnv: string): Promise<string | undefined> {
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, 'ffmpeg');
    try {
      const st = await fsp.stat(candidate);
      if (!st.isFile()) continue;
      await fsp.access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}
