// The data set every row works on, generated once per run into the temp folder and shared by
// our server and the reference tools. Each part is generated on first use only.
import { Buffer } from 'node:buffer';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { wasInterrupted } from './cleanup.mjs';
import { millionTree } from './million.mjs';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Words for generated names; none contains the search term (or part of it across a '-'). */
const WORDS = [
  'alpha',
  'report',
  'photo',
  'backup',
  'invoice',
  'draft',
  'final',
  'summer',
  'winter',
  'project',
  'notes',
  'budget',
  'scan',
  'video',
  'music',
  'letter',
  'config',
  'archive',
  'sketch',
  'table',
  'garden',
  'travel',
  'family',
  'meeting',
  'review',
  'export',
  'import',
  'sample',
  'test',
  'data',
];
const EXTS = ['txt', 'md', 'jpg', 'png', 'pdf', 'mp3', 'mp4', 'zip', 'json', 'csv', 'go', 'js', ''];

/** The search term; generated hits spell it in mixed case to exercise case-insensitivity. */
export const SEARCH_TERM = 'needle';
const SEARCH_SPELLING = 'NeeDle';

/**
 * @typedef {object} Sizes
 * @property {number} listFiles files in the listing folder (10,000 at scale 1)
 * @property {number} bigBytes size of the download/upload file (1 GiB at scale 1)
 * @property {number} treeBytes size of the archive tree (1 GiB at scale 1)
 * @property {number} searchFiles files in the search tree (200,000 at scale 1)
 * @property {number} photos number of photos (200 at scale 1)
 * @property {number} millionEntries entries of the million tree (1,000,000 at scale 1)
 * @property {number} millionBig files in its big folder (100,000 at scale 1)
 */

/**
 * @param {number} scale
 * @returns {Sizes}
 */
export function sizesFor(scale) {
  const mib = (/** @type {number} */ n) => Math.max(4 * MiB, Math.round((n * scale) / MiB) * MiB);
  return {
    listFiles: Math.max(100, Math.round(10_000 * scale)),
    bigBytes: mib(GiB),
    treeBytes: mib(GiB),
    searchFiles: Math.max(2000, Math.round(200_000 * scale)),
    photos: Math.max(4, Math.round(200 * scale)),
    millionEntries: Math.max(20_000, Math.round(1_000_000 * scale)),
    millionBig: Math.max(2000, Math.round(100_000 * scale)),
  };
}

/**
 * Rough disk need of the whole data set (upload writes a second copy of the big file).
 * @param {Sizes} s
 */
export function diskNeed(s) {
  return s.bigBytes * 2 + s.treeBytes + s.photos * 4 * MiB + s.searchFiles * 4096 + s.listFiles * 8192;
}

/** Lets signals (Ctrl-C) through during long generation loops, and stops them. */
async function tick() {
  await setImmediate();
  if (wasInterrupted()) throw new Error('interrupted');
}

/** 8 MiB of random bytes, reused (rotated) for all file contents: incompressible, cheap. */
let pool = /** @type {Buffer | null} */ (null);
function randomPool() {
  pool ??= crypto.randomFillSync(Buffer.allocUnsafe(8 * MiB));
  return pool;
}

/**
 * Writes `bytes` bytes from the random pool, starting at a rotation that depends on `seed`.
 * @param {string} file
 * @param {number} bytes
 * @param {number} seed
 */
async function writeRandomFile(file, bytes, seed) {
  const src = randomPool();
  const fd = fs.openSync(file, 'w');
  try {
    let offset = (seed * 4099) % src.length;
    let left = bytes;
    while (left > 0) {
      const n = Math.min(left, src.length - offset);
      fs.writeSync(fd, src, offset, n);
      left -= n;
      offset = (offset + n) % src.length;
      await tick();
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** 64 KiB of word soup: text that gzip compresses about 3:1, like real documents. */
function textBlock() {
  const rnd = randomPool();
  const parts = [];
  let len = 0;
  for (let i = 0; len < 64 * 1024; i++) {
    const w = `${WORDS[(rnd[i] ?? 0) % WORDS.length]} ${(rnd[i + 1] ?? 0) % 100}${i % 12 === 11 ? '.\n' : ' '}`;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join(''));
}

/**
 * @typedef {object} Dataset
 * @property {string} root the folder served by our server and by nginx
 * @property {Sizes} sizes
 * @property {() => Promise<{ rel: string, abs: string, files: number }>} listing
 * @property {() => Promise<{ rel: string, abs: string, bytes: number }>} bigFile
 * @property {() => Promise<{ rel: string, abs: string, bytes: number, files: number }>} tree
 * @property {() => Promise<{ rel: string, abs: string, entries: number, hits: number, term: string }>} searchTree
 * @property {() => Promise<{ rel: string, abs: string, names: string[] }>} photos
 * @property {() => Promise<{ rel: string, abs: string }>} uploads
 * @property {() => Promise<import('./million.mjs').MillionTree>} million
 */

/**
 * @param {string} root
 * @param {Sizes} sizes
 * @param {(msg: string) => void} log
 * @returns {Dataset}
 */
export function createDataset(root, sizes, log) {
  fs.mkdirSync(root, { recursive: true });
  /** @type {Map<string, Promise<any>>} */
  const memo = new Map();
  /**
   * @template T
   * @param {string} key
   * @param {() => Promise<T> | T} make
   * @returns {Promise<T>}
   */
  const once = (key, make) => {
    if (!memo.has(key)) {
      memo.set(
        key,
        (async () => {
          const t0 = Date.now();
          const value = await make();
          log(`data: ${key} ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
          return value;
        })(),
      );
    }
    return /** @type {Promise<T>} */ (memo.get(key));
  };

  return {
    root,
    sizes,
    listing: () =>
      once('listing', async () => {
        const rel = 'listing';
        const abs = path.join(root, rel);
        fs.mkdirSync(abs, { recursive: true });
        const src = randomPool();
        for (let i = 0; i < sizes.listFiles; i++) {
          const ext = EXTS[i % EXTS.length];
          const name = `${WORDS[i % WORDS.length]}-${String(i).padStart(6, '0')}${ext ? '.' + ext : ''}`;
          fs.writeFileSync(path.join(abs, name), src.subarray(i % 1024, (i % 1024) + ((i * 37) % 4096)));
          if (i % 1000 === 999) await tick();
        }
        return { rel, abs, files: sizes.listFiles };
      }),

    bigFile: () =>
      once('big file', async () => {
        const rel = 'big.bin';
        const abs = path.join(root, rel);
        await writeRandomFile(abs, sizes.bigBytes, 1);
        return { rel, abs, bytes: sizes.bigBytes };
      }),

    tree: () =>
      once('archive tree', async () => {
        // 90 % of the bytes in 8 MiB random blobs, 10 % in 16 KiB text files, over 8 folders.
        const rel = 'tree';
        const abs = path.join(root, rel);
        const text = textBlock();
        let bytes = 0;
        let files = 0;
        const smallBudget = Math.floor(sizes.treeBytes / 10);
        const smallCount = Math.max(1, Math.floor(smallBudget / (16 * 1024)));
        for (let i = 0; i < smallCount; i++) {
          const dir = path.join(abs, `part-${i % 8}`, 'notes');
          if (i < 8) fs.mkdirSync(dir, { recursive: true });
          const off = (i * 997) % (text.length - 16 * 1024);
          fs.writeFileSync(path.join(dir, `note-${i}.txt`), text.subarray(off, off + 16 * 1024));
          bytes += 16 * 1024;
          files++;
          if (i % 1000 === 999) await tick();
        }
        for (let i = 0; bytes < sizes.treeBytes; i++) {
          const dir = path.join(abs, `part-${i % 8}`);
          fs.mkdirSync(dir, { recursive: true });
          const n = Math.min(8 * MiB, sizes.treeBytes - bytes);
          await writeRandomFile(path.join(dir, `blob-${i}.bin`), n, i + 7);
          bytes += n;
          files++;
        }
        return { rel, abs, bytes, files };
      }),

    searchTree: () =>
      once('search tree', async () => {
        // leaf folders of 500 empty files, 20 leaves per top folder; one name in 200 holds the term
        const rel = 'search';
        const abs = path.join(root, rel);
        let entries = 0;
        let hits = 0;
        const perLeaf = 500;
        const leaves = Math.ceil(sizes.searchFiles / perLeaf);
        for (let leaf = 0; leaf < leaves; leaf++) {
          const dir = path.join(
            abs,
            `${WORDS[leaf % WORDS.length]}-${Math.floor(leaf / 20)}`,
            `batch-${leaf}`,
          );
          fs.mkdirSync(dir, { recursive: true });
          entries += leaf % 20 === 0 ? 2 : 1;
          const count = Math.min(perLeaf, sizes.searchFiles - leaf * perLeaf);
          for (let i = 0; i < count; i++) {
            const n = leaf * perLeaf + i;
            const a = WORDS[n % WORDS.length];
            const b = WORDS[(n * 7 + 3) % WORDS.length];
            const ext = EXTS[n % EXTS.length] || 'dat';
            const hit = (n + leaf * 13) % 200 === 0;
            const name = hit ? `${a}-${SEARCH_SPELLING}-${n}.${ext}` : `${a}-${b}-${n}.${ext}`;
            fs.closeSync(fs.openSync(path.join(dir, name), 'w'));
            entries++;
            if (hit) hits++;
          }
          await tick();
        }
        return { rel, abs, entries, hits, term: SEARCH_TERM };
      }),

    photos: () =>
      once('photos', async () => {
        const { default: sharp } = await import('sharp');
        const rel = 'photos';
        const abs = path.join(root, rel);
        fs.mkdirSync(abs, { recursive: true });
        const width = 3000;
        const height = 2000;
        const distinct = Math.min(sizes.photos, 8);
        /** @type {string[]} */
        const sources = [];
        const noise = randomPool();
        for (let k = 0; k < distinct; k++) {
          // a colour gradient with some grain: decodes and compresses like a photo, not like noise
          const raw = Buffer.allocUnsafe(width * height * 3);
          let p = 0;
          for (let y = 0; y < height; y++) {
            for (let x = 0; x < width; x++) {
              const g = (noise[(p + k * 131) % noise.length] ?? 0) & 15;
              raw[p++] = ((x * 255) / width + k * 30 + g) & 255;
              raw[p++] = ((y * 255) / height + g) & 255;
              raw[p++] = (((x + y) * 128) / (width + height) + k * 50 + g) & 255;
            }
          }
          await tick();
          const file = path.join(abs, `photo-${String(k + 1).padStart(4, '0')}.jpg`);
          await sharp(raw, { raw: { width, height, channels: 3 } })
            .jpeg({ quality: 85 })
            .toFile(file);
          sources.push(file);
        }
        /** @type {string[]} */
        const names = [];
        for (let i = 0; i < sizes.photos; i++) {
          const name = `photo-${String(i + 1).padStart(4, '0')}.jpg`;
          if (i % 50 === 49) await tick();
          if (i >= distinct)
            fs.copyFileSync(/** @type {string} */ (sources[i % distinct]), path.join(abs, name));
          names.push(name);
        }
        return { rel, abs, names };
      }),

    uploads: () =>
      once('uploads folder', () => {
        const rel = 'uploads';
        const abs = path.join(root, rel);
        fs.mkdirSync(abs, { recursive: true });
        return { rel, abs };
      }),

    million: () => once('million tree', () => millionTree(root, sizes, log)),
  };
}
