import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** A name with its letter case swapped, or undefined when it has no cased letter. */
function swapCase(name: string): string | undefined {
  const swapped = [...name].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
  return swapped === name ? undefined : swapped;
}

async function sameFile(a: string, b: string): Promise<boolean> {
  try {
    const [sa, sb] = await Promise.all([fs.lstat(a), fs.lstat(b)]);
    return sa.ino === sb.ino && sa.dev === sb.dev;
  } catch {
    return false;
  }
}

/**
 * Whether names in a folder are compared without regard to case (macOS and Windows file systems,
 * case-folding mounts). Then `/Private` and `/private` are the same folder, and rule paths must be
 * compared lower-cased (contract 1.7) or a rule could be walked around by changing case.
 * Looked up with an entry already there when there is one; only an empty folder gets a probe file,
 * created and removed at once (File Browser created one at every start).
 */
export async function detectCaseInsensitive(dir: string): Promise<boolean> {
  const entries = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of entries.slice(0, 50)) {
    const swapped = swapCase(name);
    if (swapped === undefined) continue;
    // Two names differing only in case side by side: the folder tells them apart.
    if (entries.includes(swapped)) return false;
    return sameFile(path.join(dir, name), path.join(dir, swapped));
  }
  const probe = path.join(dir, `.filebrowser-case-probe-${crypto.randomBytes(6).toString('hex')}`);
  try {
    await (await fs.open(probe, 'wx', 0o600)).close();
  } catch {
    return false; // a read-only root: nothing can be created, assume the common case
  }
  try {
    return await sameFile(probe, path.join(dir, swapCase(path.basename(probe))!));
  } finally {
    await fs.rm(probe, { force: true });
  }
}

const known = new Map<string, Promise<boolean>>();

/** `detectCaseInsensitive` of the served root, looked up once per root for the process. */
export function rootIsCaseInsensitive(root: string): Promise<boolean> {
  let result = known.get(root);
  if (!result) {
    result = detectCaseInsensitive(root);
    known.set(root, result);
  }
  return result;
}
