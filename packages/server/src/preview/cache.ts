import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Preview files on disk, laid out as a mirror of the real paths they were made from, so removing
 * or moving a folder can drop the previews of everything below it with one `rm -r`.
 * An entry's name carries the source's size and mtime: a changed file is simply a miss.
 */
export class PreviewCache {
  constructor(readonly dir: string) {}

  private folderOf(realPath: string): string {
    return path.join(this.dir, 'files', realPath + '.previews');
  }

  file(realPath: string, variant: string, size: number, mtimeMs: number): string {
    return path.join(this.folderOf(realPath), `${variant}-${size}-${Math.floor(mtimeMs)}.jpg`);
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
    const temp = `${file}.${crypto.randomBytes(4).toString('hex')}.tmp`;
    await fs.writeFile(temp, data, { mode: 0o600 });
    await fs.rename(temp, file);
  }

  /** Drops the previews of a file, or of a folder and everything below it. */
  async invalidate(realPath: string): Promise<void> {
    await Promise.all([
      fs.rm(this.folderOf(realPath), { recursive: true, force: true }),
      fs.rm(path.join(this.dir, 'files', realPath), { recursive: true, force: true }),
    ]).catch(() => undefined);
  }
}
