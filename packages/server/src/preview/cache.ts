import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Preview files on disk, laid out as a mirror of the real paths they were made from, so removing
 * or moving a folder drops the previews of everything below it with one `rm -r`.
 *
 * Every component of a real path becomes a folder whose name is the component prefixed with `_`;
 * the previews of a file are the entries of its folder that do not start with `_`. A file's
 * previews therefore never share a name with the mirror of anything below a folder of the same
 * name. An entry's name carries the source's size and mtime: a changed file is simply a miss.
 */
export class PreviewCache {
  constructor(readonly dir: string) {}

  /** The mirror folder of a real path (absolute, `/`-separated). */
  folderOf(realPath: string): string {
    const parts = realPath.split('/').filter(Boolean);
    return path.join(this.dir, 'files', ...parts.map((p) => '_' + p));
  }

  file(realPath: string, variant: string, size: number, mtimeMs: number): string {
    return path.join(this.folderOf(realPath), `${variant}-${size}-${Math.floor(mtimeMs)}`);
  }

  async read(file: string): Promise<Buffer | undefined> {
    return fs.readFile(file).catch(() => undefined);
  }

  /** Writes through a temporary name so a reader never sees half a preview. */
  async write(file: string, data: Buffer): Promise<void> {
    const folder = path.dirname(file);
    await fs.mkdir(folder, { recursive: true, mode: 0o700 });
    // Older previews of the same variant were made from an earlier version of the file.
    const variant = path.basename(file).split('-')[0] + '-';
    for (const old of await fs.readdir(folder)) {
      if (old.startsWith(variant)) await fs.rm(path.join(folder, old), { force: true });
    }
    const temp = path.join(folder, `.${crypto.randomBytes(6).toString('hex')}.tmp`);
    try {
      await fs.writeFile(temp, data, { mode: 0o600 });
      await fs.rename(temp, file);
    } catch (err) {
      await fs.rm(temp, { force: true });
      throw err;
    }
  }

  /** Drops the previews of a file, or of a folder and everything below it. */
  async invalidate(realPath: string): Promise<void> {
    if (!realPath.startsWith('/') || realPath === '/') return;
    await fs.rm(this.folderOf(realPath), { recursive: true, force: true });
  }
}
