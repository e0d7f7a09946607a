import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { statFileSystem, type Pinned } from '../files/access/anchor.js';

/**
 * What a new resumable upload must fit in before anything is written: the user's uploads in
 * progress (`--uploadsPendingLimit`, `--uploadsPendingBytes`) and the free space on the disks.
 */
export class PendingLimits {
  /**
   * Creations past the limits check but not yet recorded, per user. The check and the record are
   * separated by hooks and disk work, so parallel POSTs must see each other here or they would
   * all pass the check at once (the login limit's old mistake).
   */
  private readonly creating = new Map<number, { count: number; bytes: number }>();

  constructor(private readonly ctx: AppContext) {}

  /**
   * Holds a place for a new upload within the user's limits (its own earlier upload to the same
   * path is replaced, so it does not count); the returned function gives the place back once the
   * upload is recorded or refused.
   */
  async reserve(userId: number, virtual: string, length: number): Promise<() => void> {
    const { uploadsPendingLimit: limit, uploadsPendingBytes: budget } = this.ctx.config;
    const stored = await this.ctx.store.uploads.pendingOf(userId, virtual);
    const creating = this.creating.get(userId) ?? { count: 0, bytes: 0 };
    if (stored.count + creating.count >= limit) {
      throw new AppError(
        'too_many_requests',
        `${limit} uploads are already in progress: finish or cancel one before starting another`,
      );
    }
    const left = budget - stored.bytes - creating.bytes;
    if (length > left) {
      throw new AppError(
        'payload_too_large',
        `Upload-Length ${length} is more than the ${Math.max(left, 0)} bytes left to the uploads in progress (${budget} in all)`,
      );
    }
    const mine = { count: creating.count + 1, bytes: creating.bytes + length };
    this.creating.set(userId, mine);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const now = this.creating.get(userId)!;
      now.count -= 1;
      now.bytes -= length;
      if (now.count === 0) this.creating.delete(userId);
    };
  }
}

/** A declared length that cannot fit where the bytes go, staging or target, is refused up front. */
export async function assertRoomFor(
  length: number,
  stagingDir: string,
  targetFolder: Pinned | undefined,
): Promise<void> {
  if (length === 0) return;
  // The staging folder may not exist yet; its parent (the database's folder) does.
  const places = [fs.statfs(path.dirname(stagingDir))];
  if (targetFolder) places.push(statFileSystem(targetFolder));
  for (const st of await Promise.all(places)) {
    const free = st.bavail * st.bsize;
    if (length > free) {
      throw new AppError(
        'payload_too_large',
        `Upload-Length ${length} is more than the free space on the disk (${free} bytes)`,
      );
    }
  }
}
