import fs from 'node:fs/promises';
import path from 'node:path';
import type { AppContext } from '../context.js';
import { storedOrLater } from '../store/until-stored.js';
import { AppError } from '../errors.js';
import { inTurn, type Turns } from '../store/in-turn.js';
import { statFileSystem, type Pinned } from '../files/access/anchor.js';

/**
 * What a new resumable upload must fit in before anything is written: the user's uploads in
 * progress (`--uploadsPendingLimit`, `--uploadsPendingBytes`) and the free space on the disks.
 */
export class PendingLimits {
  /** The check and the hold it grants, one at a time across the instances. */
  private readonly turns: Turns;

  constructor(private readonly ctx: AppContext) {
    this.turns = inTurn(ctx.store.lockLine);
  }

  /**
   * Holds a place for a new upload within the user's limits (its own earlier upload to the same
   * path is replaced, so it does not count); the returned function gives the place back once the
   * upload is recorded or refused. The check and the hold happen together, one at a time across
   * the instances: the hold is a row every instance counts (`upload_creations`), since the check
   * and the record are separated by hooks and disk work, and parallel POSTs through any instance
   * must see each other (the login limit's old mistake).
   */
  reserve(userId: number, virtual: string, length: number, id: string): Promise<() => Promise<void>> {
    return this.turns(`upload-creations:${userId}`, () => this.check(userId, virtual, length, id));
  }

  private async check(
    userId: number,
    virtual: string,
    length: number,
    id: string,
  ): Promise<() => Promise<void>> {
    const { uploadsPendingLimit: limit, uploadsPendingBytes: budget } = this.ctx.config;
    const { uploads, uploadCreations } = this.ctx.store;
    // Creations first: one that ends between the two reads records its upload before it lets go
    // of its creation, so it is counted once or twice, never missed.
    const creating = await uploadCreations.of(userId);
    const stored = await uploads.pendingOf(userId, virtual);
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
    // Under the upload's own id: an instance that dies mid-creation leaves a row that names the
    // quota hold it took (store/reservations.ts `forgetCreationsOfInstancesBut`).
    await uploadCreations.add(id, userId, length);
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await storedOrLater(
        this.ctx.store,
        () => uploadCreations.remove(id),
        (err) => this.ctx.log.warn({ err }, 'the record of an upload being created could not be removed'),
      );
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
