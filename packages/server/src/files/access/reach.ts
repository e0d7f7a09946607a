import { Pinned } from './anchor.js';

/**
 * Runs `fn` with the folder at a real path recorded earlier (in the database), reached from `/`
 * one entry at a time without following a link: a link planted in its place since leads nowhere.
 * Answers undefined when the folder is gone or is not a folder any more.
 */
export async function atRecordedFolder<T>(
  folderReal: string,
  fn: (folder: Pinned) => Promise<T>,
): Promise<T | undefined> {
  const pins: Pinned[] = [await Pinned.folder('/')];
  try {
    for (const segment of folderReal.split('/').filter((s) => s !== '')) {
      const next = await pins[pins.length - 1]!.lookup(segment);
      if (!next) return undefined;
      pins.push(next);
      if (!next.stat.isDirectory()) return undefined;
    }
    return await fn(pins[pins.length - 1]!);
  } finally {
    for (const pin of pins.reverse()) await pin.close();
  }
}
