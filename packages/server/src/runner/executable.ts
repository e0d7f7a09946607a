import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

export interface Executable {
  /** Where it was found on the PATH (what is spawned). */
  path: string;
  /** Its real path, symlinks resolved (`/usr/bin/awk` may really be `/usr/bin/mawk`). */
  real: string;
  /** It runs with its owner's or group's rights (setuid, setgid). */
  setId: boolean;
}

/**
 * Finds the command `name` in the absolute `folders`, as execvp would, but only regular executable
 * files count. `name` must be a bare name: anything with a `/` is the caller's to refuse.
 */
export async function findExecutable(
  name: string,
  folders: readonly string[],
): Promise<Executable | undefined> {
  if (!name || name.includes('/') || name === '.' || name === '..') return undefined;
  for (const dir of folders) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      const st = await fsp.stat(candidate);
      if (!st.isFile()) continue;
      await fsp.access(candidate, fs.constants.X_OK);
      return { path: candidate, real: await fsp.realpath(candidate), setId: (st.mode & 0o6000) !== 0 };
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

/** A folder of the host's programs and libraries as a sandbox shows it: bound read-only, or a link. */
export interface SystemEntry {
  path: string;
  /** The link's target, when the host has a link there (`/bin -> usr/bin` on merged-/usr systems). */
  link?: string;
}

/** Where programs and their libraries live; `/usr` holds them on every current distribution. */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

let systemLayout: SystemEntry[] | undefined;

/** The host's program folders as they are (looked at once: they do not move while the server runs). */
export function hostSystemLayout(): SystemEntry[] {
  systemLayout ??= SYSTEM_FOLDERS.flatMap((p): SystemEntry[] => {
    try {
      const st = fs.lstatSync(p);
      if (st.isSymbolicLink()) return [{ path: p, link: fs.readlinkSync(p) }];
      return st.isDirectory() ? [{ path: p }] : [];
    } catch {
      return [];
    }
  });
  return systemLayout;
}
