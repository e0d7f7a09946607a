import fs from 'node:fs';
import type fsp from 'node:fs/promises';
import type { FileType } from '@filebrowser/contract';
import { openEntryFile, openEntryFileSync, openPinnedFile, type Pinned } from '../access/anchor.js';
import { isBinary, mimeByExtension, sniff } from './mime.js';

/**
 * What kind of file an entry is (contract 3.1): its extension's MIME type, and where that is not
 * enough, its first 512 bytes.
 */

/** The `text` type stops at 10 MiB (contract 3.1); content stops earlier, at TEXT_CONTENT_LIMIT. */
export const TEXT_LIMIT = 10 * 1024 * 1024;
const SAMPLE_SIZE = 512;

/** Up to the first 512 bytes of an open file. */
async function sampleOf(fh: fsp.FileHandle): Promise<Buffer> {
  const buf = Buffer.alloc(SAMPLE_SIZE);
  const { bytesRead } = await fh.read(buf, 0, SAMPLE_SIZE, 0);
  return buf.subarray(0, bytesRead);
}

/** The first bytes of the entry `name` of a pinned folder (no link followed, no pipe waited on). */
export async function readEntrySample(folder: Pinned, name: string): Promise<Buffer> {
  const fh = await openEntryFile(folder, name);
  try {
    return await sampleOf(fh);
  } finally {
    await fh.close();
  }
}

/** The first bytes of a pinned file. */
export async function readPinnedSample(node: Pinned): Promise<Buffer> {
  const fh = await openPinnedFile(node);
  try {
    return await sampleOf(fh);
  } finally {
    await fh.close();
  }
}

/** What the type of a MIME type's files is before any sample is looked at. */
type MimeClass = 'video' | 'audio' | 'image' | 'pdf' | 'text' | 'other';

const mimeClasses = new Map<string, MimeClass>();

/** Contract 3.1 step 4 on the MIME type alone; memoised, there are only so many MIME types. */
function mimeClass(mime: string): MimeClass {
  let cls = mimeClasses.get(mime);
  if (cls === undefined) {
    if (mime.startsWith('video')) cls = 'video';
    else if (mime.startsWith('audio')) cls = 'audio';
    else if (mime.startsWith('image')) cls = 'image';
    else if (mime.split(';')[0]!.trim().endsWith('pdf')) cls = 'pdf';
    else if (mime.startsWith('text')) cls = 'text';
    else cls = 'other';
    if (mimeClasses.size < 4096) mimeClasses.set(mime, cls);
  }
  return cls;
}

/** Contract 3.1 step 4, without the textImmutable refinement. */
export function classify(mime: string, size: number, sample: Buffer): Exclude<FileType, '' | 'invalid_link'> {
  const cls = mimeClass(mime);
  if (cls === 'video' || cls === 'audio' || cls === 'image' || cls === 'pdf') return cls;
  if ((cls === 'text' || !isBinary(sample)) && size <= TEXT_LIMIT) return 'text';
  return 'blob';
}

/** Whether reading the header could change the answer (it never does for media, pdf or text by extension). */
export function sampleMatters(mime: string, size: number): boolean {
  if (!mime) return true;
  if (size > TEXT_LIMIT) return false;
  return mimeClass(mime) === 'other';
}

export const EMPTY: Buffer = Buffer.alloc(0);

let sniffedEmpty: string | undefined;

/** `typeFromSample` of an empty file, without sniffing the empty sample again for every file. */
export function emptyFileType(mime: string): Exclude<FileType, '' | 'invalid_link'> {
  sniffedEmpty ??= sniff(EMPTY);
  return classify(mime || sniffedEmpty, 0, EMPTY);
}

/** The type once the sample is known (or empty because it could not be read). */
export function typeFromSample(
  mime: string,
  size: number,
  sample: Buffer,
): Exclude<FileType, '' | 'invalid_link'> {
  return classify(mime || sniff(sample), size, sample);
}

/**
 * The type of a regular file or special file (contract 3.1). With `readHeader` off the sample is
 * empty, and an empty sample counts as text: File Browser's quirk, kept for the wire.
 */
export async function detectType(
  name: string,
  st: { size: number | bigint; special: boolean },
  readHeader: boolean,
  sample: () => Promise<Buffer>,
): Promise<{ type: Exclude<FileType, '' | 'invalid_link'>; mime: string }> {
  if (st.special) return { type: 'blob', mime: '' };
  const size = Number(st.size);
  let mime = mimeByExtension(name);
  let bytes: Buffer = EMPTY;
  if (readHeader && sampleMatters(mime, size)) {
    bytes = await sample().catch(() => EMPTY);
    if (!mime) mime = sniff(bytes);
  }
  return { type: classify(mime, size, bytes), mime };
}

/** One buffer for synchronous sample reads: each is classified before anything else runs. */
const syncSample = Buffer.alloc(SAMPLE_SIZE);

/** `readEntrySample` without the thread pool, for the listing's fast path. */
export function readEntrySampleSync(folder: Pinned, name: string): Buffer {
  const fd = openEntryFileSync(folder, name);
  try {
    return syncSample.subarray(0, fs.readSync(fd, syncSample, 0, SAMPLE_SIZE, 0));
  } finally {
    fs.closeSync(fd);
  }
}
