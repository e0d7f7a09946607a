import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type { BuildOptions } from '../src/app.js';
import type { ServerConfig } from '../src/config/types.js';
import { startFilesApp, type FilesApp } from './files-helpers.js';
import { mountTmpfs, unmountTmpfs } from './tools.js';

/** The real app with some of its folders on a small real file system (a tmpfs). */
export interface SmallDisk {
  app: FilesApp;
  /** Where the tmpfs is mounted. */
  disk: string;
  /** Unmounts the tmpfs and closes the app. */
  close(): Promise<void>;
}

/**
 * Starts the real app after mounting a tmpfs of `size` at `<test folder>/disk`; `layout` names
 * the folders that lie on it (it runs before the app opens them, and may create them). Answers
 * undefined when no tmpfs can be mounted (mounting needs root): the test is then skipped with a
 * printed reason, or fails in CI (see `mountTmpfs`).
 */
export async function startWithSmallDisk(
  size: string,
  why: string,
  layout: (disk: string, base: string) => Partial<ServerConfig>,
  build: BuildOptions = {},
): Promise<SmallDisk | undefined> {
  let disk: string | undefined;
  const app = await startFilesApp((base) => {
    const dir = path.join(base, 'disk');
    // Synchronous: the folders must be on the tmpfs before the app opens them.
    fsSync.mkdirSync(dir);
    if (mountTmpfs(dir, size, why)) disk = dir;
    return layout(dir, base);
  }, build);
  if (!disk) {
    await app.close();
    return undefined;
  }
  const mounted = disk;
  return {
    app,
    disk: mounted,
    close: async () => {
      unmountTmpfs(mounted);
      await app.close();
    },
  };
}

/** The served root on the small disk (and, with `dbOnDisk`, the database and upload staging). */
export function rootOnDisk(opts: { dbOnDisk?: boolean } = {}) {
  return (disk: string): Partial<ServerConfig> => {
    fsSync.mkdirSync(path.join(disk, 'root'));
    return {
      root: path.join(disk, 'root'),
      ...(opts.dbOnDisk && { database: path.join(disk, 'db', 'filebrowser.db') }),
    };
  };
}

/**
 * Fills the disk until a write fails, then frees `leave` bytes again; answers the filler's path
 * (removing it frees the disk).
 */
export async function fillDisk(dir: string, leave = 0): Promise<string> {
  const spare = path.join(dir, '.spare');
  if (leave) await fs.writeFile(spare, Buffer.alloc(leave, 1));
  const filler = path.join(dir, '.filler');
  const fh = await fs.open(filler, 'w');
  const chunk = Buffer.alloc(16 * 1024, 2);
  try {
    for (;;) await fh.write(chunk);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
  } finally {
    await fh.close();
  }
  if (leave) await fs.rm(spare);
  return filler;
}

/** Bytes free on the file system of `dir`. */
export async function freeBytes(dir: string): Promise<number> {
  const st = await fs.statfs(dir);
  return st.bavail * st.bsize;
}

export const DISK_FULL = '507 Insufficient Storage (the disk is full: free some space and try again)\n';
