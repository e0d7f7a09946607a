// The tree of the `million` row: 1,000,000 entries at scale 1, one folder of 100,000 files, a
// small folder for the latency probe, the rest in folders of 1,000. Generating it takes minutes,
// so it is kept between runs in the system temp folder (fb-bench-million-<entries>) and renamed
// into the served folder for the run (the run's folder is on the same file system), then renamed
// back before the run's folder is deleted, also on Ctrl-C.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setImmediate } from 'node:timers/promises';
import { beforeRemovingDirs, wasInterrupted } from './cleanup.mjs';

const SPELLING = 'NeeDle';
const PER_FOLDER = 1000;
/** One name in this many holds the search term. */
const HIT_EVERY = 500;
const SMALL_FILES = 20;

/**
 * @typedef {object} MillionTree
 * @property {string} rel the tree, relative to the served folder
 * @property {string} abs
 * @property {number} entries every file and folder under it
 * @property {number} hits names holding the term
 * @property {string} bigRel the folder of `bigFiles` files
 * @property {number} bigFiles
 * @property {string} smallRel a folder of a few files, listed while the big work runs
 * @property {number} smallFiles
 */

/**
 * @param {number} entries
 * @param {number} bigFiles
 * @param {string} dir
 * @param {(msg: string) => void} log
 */
async function generate(entries, bigFiles, dir, log) {
  let count = 0;
  let hits = 0;
  let n = 0;
  /** @param {string} folder @param {number} files */
  const fill = async (folder, files) => {
    fs.mkdirSync(folder, { recursive: true });
    count++;
    for (let i = 0; i < files; i++, n++) {
      const hit = n % HIT_EVERY === HIT_EVERY - 1;
      const name = hit ? `item-${SPELLING}-${n}.txt` : `item-${n}.${n % 3 === 0 ? 'txt' : 'dat'}`;
      fs.closeSync(fs.openSync(path.join(folder, name), 'w'));
      count++;
      if (hit) hits++;
      if (i % 5000 === 4999) {
        await setImmediate();
        if (wasInterrupted()) throw new Error('interrupted');
      }
    }
  };
  await fill(path.join(dir, 'big'), bigFiles);
  await fill(path.join(dir, 'small'), SMALL_FILES);
  fs.mkdirSync(path.join(dir, 'tree'));
  count++;
  for (let folder = 0; count < entries; folder++) {
    await fill(path.join(dir, 'tree', `d-${folder}`), Math.min(PER_FOLDER, entries - count - 1));
    if (folder % 100 === 99) log(`data: million tree ${count.toLocaleString('en-US')} entries…`);
  }
  return { entries: count, hits };
}

/**
 * @param {string} root the served folder
 * @param {{ millionEntries: number, millionBig: number }} sizes
 * @param {(msg: string) => void} log
 * @returns {Promise<MillionTree>}
 */
export async function millionTree(root, sizes, log) {
  const cache = path.join(os.tmpdir(), `fb-bench-million-${sizes.millionEntries}-${sizes.millionBig}`);
  const cached = path.join(cache, 'tree');
  const marker = path.join(cache, 'complete.json');
  /** @type {{ entries: number, hits: number } | null} */
  let made = null;
  try {
    made = JSON.parse(fs.readFileSync(marker, 'utf8'));
  } catch {
    made = null;
  }
  if (!made || !fs.existsSync(cached)) {
    fs.rmSync(cache, { recursive: true, force: true });
    fs.mkdirSync(cached, { recursive: true });
    log(`data: generating the million tree in ${cache} (kept for later runs)`);
    made = await generate(sizes.millionEntries, sizes.millionBig, cached, log);
    fs.writeFileSync(marker, JSON.stringify(made));
  } else {
    log(`data: million tree from ${cache}`);
  }
  const rel = 'million';
  const abs = path.join(root, rel);
  fs.renameSync(cached, abs);
  beforeRemovingDirs(() => fs.renameSync(abs, cached));
  return {
    rel,
    abs,
    entries: made.entries,
    hits: made.hits,
    bigRel: `${rel}/big`,
    bigFiles: sizes.millionBig,
    smallRel: `${rel}/small`,
    smallFiles: SMALL_FILES,
  };
}
