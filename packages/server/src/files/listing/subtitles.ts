import type fs from 'node:fs';
import type { AccessView } from '../access/access-view.js';
import { readFolderTypes, type Pinned } from '../access/anchor.js';
import { extensionOf } from './mime.js';
import { joinVirtual } from '../access/resolver.js';

/** Subtitle files that go with a video, found for a folder's listing or for the video's own info. */

/**
 * Subtitle names: `.vtt`, `.srt`, `.ass`, `.ssa` in any letter case. The old server's pattern had
 * an unescaped dot (`foo_srt` matched); the subtitle endpoint uses the same test as discovery.
 */
const SUBTITLE_NAME = /\.(vtt|srt|ass|ssa)$/i;

/** The entries of the folder reached from `folder` by `names`, one at a time and no link followed; none when there is no such folder. */
async function readNested(folder: Pinned, names: readonly string[]): Promise<fs.Dirent[]> {
  const opened: Pinned[] = [];
  try {
    let here = folder;
    for (const name of names) {
      const next = await here.lookup(name);
      if (!next) return [];
      opened.push(next);
      if (!next.stat.isDirectory()) return [];
      here = next;
    }
    return await readFolderTypes(here);
  } catch {
    return [];
  } finally {
    for (const p of opened) await p.close();
  }
}

/** A place subtitles can come from, in the order of the folder's entries. */
type SubtitleSource =
  { kind: 'sibling'; name: string } | { kind: 'folder'; name: string; dirents: Promise<fs.Dirent[]> };

/**
 * Subtitle discovery for the videos of one folder (contract 3.3). The folder's entries are looked
 * through once and each `subs`/`subtitles` folder is read once, however many videos there are.
 * The folder is pinned by the caller for as long as the finder is used.
 */
export class SubtitleFinder {
  private readonly sources: SubtitleSource[] = [];
  private readonly deeper = new Map<string, Promise<fs.Dirent[]>>();
  /** The folder has `subs`/`subtitles` folders, whose contents matter. */
  readonly readsFolders: boolean;

  constructor(
    private readonly access: AccessView,
    private readonly dir: Pinned,
    private readonly dirVirtual: string,
    siblings: readonly { name: string; isDir: boolean }[],
  ) {
    for (const entry of siblings) {
      if (!entry.isDir) {
        if (SUBTITLE_NAME.test(entry.name)) this.sources.push({ kind: 'sibling', name: entry.name });
        continue;
      }
      const lower = entry.name.toLowerCase();
      if (lower !== 'subs' && lower !== 'subtitles') continue;
      this.sources.push({ kind: 'folder', name: entry.name, dirents: readNested(dir, [entry.name]) });
    }
    this.readsFolders = this.sources.some((s) => s.kind === 'folder');
  }

  static async of(access: AccessView, dir: Pinned, dirVirtual: string): Promise<SubtitleFinder> {
    const siblings = (await readNested(dir, [])).map((d) => ({ name: d.name, isDir: d.isDirectory() }));
    return new SubtitleFinder(access, dir, dirVirtual, siblings);
  }

  /**
   * Subtitles of a video: siblings starting with the video's base name, files in sibling
   * `subs`/`subtitles` folders and in their sub-folders starting with the base name. Unlike the
   * old server, paths failing the user's rules are left out.
   */
  async find(videoName: string): Promise<string[]> {
    const base = videoName.slice(0, videoName.length - extensionOf(videoName).length);
    const out: string[] = [];
    const add = (virtual: string) => {
      if (this.access.check(virtual)) out.push(virtual);
    };
    for (const source of this.sources) {
      if (source.kind === 'sibling') {
        if (source.name.startsWith(base)) add(joinVirtual(this.dirVirtual, source.name));
        continue;
      }
      const subsVirtual = joinVirtual(this.dirVirtual, source.name);
      for (const sub of await source.dirents) {
        if (!sub.isDirectory()) {
          if (SUBTITLE_NAME.test(sub.name)) add(joinVirtual(subsVirtual, sub.name));
        } else if (sub.name.startsWith(base)) {
          const key = `${source.name}/${sub.name}`;
          let inner = this.deeper.get(key);
          if (!inner) {
            inner = readNested(this.dir, [source.name, sub.name]);
            this.deeper.set(key, inner);
          }
          for (const deeper of await inner) {
            if (!deeper.isDirectory() && SUBTITLE_NAME.test(deeper.name)) {
              add(joinVirtual(joinVirtual(subsVirtual, sub.name), deeper.name));
            }
          }
        }
      }
    }
    return out;
  }
}

/** Subtitles of one video (see `SubtitleFinder.find`); `dir` is the pinned folder holding it. */
export async function findSubtitles(
  access: AccessView,
  dir: Pinned,
  dirVirtual: string,
  videoName: string,
): Promise<string[]> {
  return (await SubtitleFinder.of(access, dir, dirVirtual)).find(videoName);
}
