import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { AppContext } from '../context.js';
import { assertMay, may } from '../auth/policy.js';
import { AppError, badRequest, conflict, forbidden, isDiskFull, notFound } from '../errors.js';
import { fileAccessFor, type FileAccess } from '../files/access/access.js';
import { joinReal, type Pinned } from '../files/access/anchor.js';
import { assertUnmoved, placeOf } from '../files/change/write.js';
import type { QuotaHold } from '../files/change/quota-hold.js';
import { quotaLedgerOf } from '../files/change/quota.js';
import type { Resolved } from '../files/access/resolver.js';
import { serverPaths } from '../files/access/private.js';
import { stagingLedgerOf } from '../files/change/staging.js';
import type { HeldLock } from '../store/lock-line.js';
import { uploadHolder } from '../store/reservations.js';
import type { PendingUpload } from '../store/uploads.js';
import type { StoredUser } from '../store/users.js';
import { assertRoomFor, PendingLimits } from './limits.js';
import { appendBody, interrupted, removeQuietly, replaceAtomically } from './staging-file.js';

export interface UploadStatus {
  offset: number;
  length: number;
  /** Set when this request completed the upload: the real path of the file now in place. */
  completed?: string;
}

/**
 * Resumable uploads (the tus protocol's core, creation and termination). Bytes go to a staging
 * file outside the served folder and replace the target in one rename when the last byte is in:
 * until then an existing file stays intact and readable, and a failed or abandoned upload never
 * deletes anything but its own staging file.
 */
export class ResumableUploads {
  /** One promise chain per upload: PATCHes to the same upload run one after the other. */
  private readonly locks = new Map<string, Promise<unknown>>();
  /** What each upload in progress holds against the quotas, from creation to completion. */
  private readonly holds = new Map<string, QuotaHold>();
  private readonly limits: PendingLimits;

  constructor(private readonly ctx: AppContext) {
    this.limits = new PendingLimits(ctx);
    // An upload begun here may be finished or cancelled through another instance: what it held
    // here against the quotas is let go when that instance says so.
    ctx.store.notices.on('uploads', () => this.forgetEnded());
  }

  private async forgetEnded(): Promise<void> {
    const pending = await this.ctx.store.uploads.pendingAmong([...this.holds.keys()]);
    for (const id of [...this.holds.keys()]) if (!pending.has(id)) this.letGo(id, false);
  }

  /** `uploads` beside the database (see `serverPaths` for a database inside the served folder). */
  get stagingDir(): string {
    return serverPaths(this.ctx.config).uploadsDir;
  }

  /** The routes' guard has checked the create permission (auth/policy.ts). */
  private access(user: StoredUser): Promise<FileAccess> {
    return fileAccessFor(this.ctx, user);
  }

  /**
   * POST: registers an upload of `length` bytes to `rawPath`. Zero bytes complete at once.
   * `beforeCreate` runs once every check passed and before anything is written (the before-hooks).
   */
  async create(
    user: StoredUser,
    rawPath: string,
    lengthHeader: string | undefined,
    override: boolean,
    beforeCreate: (targetReal: string) => Promise<void> = async () => undefined,
  ): Promise<UploadStatus> {
    const access = await this.access(user);
    const target = await access.open(rawPath);
    try {
      if (target.virtual === '/') throw forbidden();
      if (target.stat?.isDirectory()) throw badRequest('a folder with this name exists');
      if (target.stat || target.isSymlink) {
        if (!override) throw conflict('a file with this name exists');
        assertMay(user.perm, 'modify');
      }
      await access.locks.assertWritable(access, target, { member: !target.linkStat });
      if (
        lengthHeader === undefined ||
        !/^\d+$/.test(lengthHeader) ||
        !Number.isSafeInteger(Number(lengthHeader))
      ) {
        throw badRequest('Upload-Length must be a whole number of bytes');
      }
      const length = Number(lengthHeader);
      const id = crypto.randomBytes(16).toString('base64url');
      const release = await this.limits.reserve(user.id, access.scopePathOf(target.virtual), length, id);
      let upload: PendingUpload;
      let quota: QuotaHold | undefined;
      try {
        await assertRoomFor(length, this.stagingDir, target.linkFolder ?? target.folder);
        quota = await access.quota.reserve(
          access,
          landing(target),
          length - replacedBytes(target, override),
          undefined,
          uploadHolder(id),
        );
        await beforeCreate(target.real);
        // The folders of the target exist from now on, as they did for File Browser's uploads.
        const place = await placeOf(target, this.ctx.store.settings.get().dirMode);
        await place.release();

        await fs.mkdir(this.stagingDir, { recursive: true, mode: 0o700 });
        const staging = path.join(this.stagingDir, `${id}.part`);
        await (await fs.open(staging, 'wx', 0o600)).close();
        const put = await this.ctx.store.uploads.put({
          id,
          userId: user.id,
          path: access.scopePathOf(target.virtual),
          length,
          override,
          staging,
        });
        upload = put.upload;
        this.holds.set(upload.id, quota);
        quota = undefined;
        if (put.replaced) {
          this.letGo(put.replaced.id);
          await removeQuietly(put.replaced.staging);
        }
      } finally {
        await release();
        quota?.release();
      }
      if (length === 0) return { offset: 0, length, completed: await this.complete(access, upload) };
      return { offset: 0, length };
    } finally {
      await target.close();
    }
  }

  /**
   * The user's upload to `target`, known by its path in the user's whole scope: a request
   * confined to a folder (a folder API token) finds only the uploads to that folder.
   */
  private async pending(user: StoredUser, access: FileAccess, target: Resolved): Promise<PendingUpload> {
    const upload = await this.ctx.store.uploads.find(user.id, access.scopePathOf(target.virtual));
    if (!upload) throw notFound('no upload in progress for this path');
    return upload;
  }

  /** HEAD: how far the upload has come. */
  async status(user: StoredUser, rawPath: string): Promise<UploadStatus> {
    const access = await this.access(user);
    const target = await access.resolve(rawPath);
    const upload = await this.pending(user, access, target);
    const st = await fs.stat(upload.staging).catch(() => undefined);
    if (!st) {
      await this.ctx.store.uploads.delete(upload.id);
      throw notFound('no upload in progress for this path');
    }
    // Asking keeps nothing alive: only bytes do (see sweep).
    return { offset: st.size, length: upload.length };
  }

  /** PATCH: appends the body at `offset`; never writes past the declared length. */
  async append(
    user: StoredUser,
    rawPath: string,
    offsetHeader: string | undefined,
    body: Readable,
    /**
     * Asked again just before the finished file takes its place (writeFileAtomic's
     * `stillAllowed`), saying whether it may replace what stands there (then modify is needed).
     */
    stillAllowed?: (replacing: boolean) => Promise<unknown>,
  ): Promise<UploadStatus> {
    const access = await this.access(user);
    const target = await access.resolve(rawPath);
    if (offsetHeader === undefined || !/^\d+$/.test(offsetHeader))
      throw badRequest('Upload-Offset must be a whole number');
    const upload = await this.pending(user, access, target);
    return this.serialised(upload.id, async (lock) => {
      const current = await this.ctx.store.uploads.find(user.id, upload.path);
      if (!current || current.id !== upload.id) throw notFound('no upload in progress for this path');
      const offset = Number(offsetHeader);
      if (offset > upload.length) throw badRequest('Upload-Offset is past Upload-Length');
      await this.checkQuota(access, upload, target);
      const written = await this.writeAt(upload, offset, body, () => !lock.lost);
      await this.ctx.store.uploads.touch(upload.id);
      if (written < upload.length) return { offset: written, length: upload.length };
      // The file lands only while no other instance can have taken the upload over; until then
      // it stays pending, for whichever instance the client asks next.
      if (lock.lost) throw interrupted();
      const completed = await this.complete(access, upload, async (replacing) => {
        if (lock.lost) throw interrupted();
        await stillAllowed?.(replacing);
      });
      return { offset: written, length: upload.length, completed };
    });
  }

  /**
   * Every request of an upload is checked against the quotas again: the creation's reservation
   * (made again after a restart, which forgets it) must still fit. An upload that no longer fits
   * is dropped with its staging file: nothing partial is kept.
   */
  private async checkQuota(access: FileAccess, upload: PendingUpload, target: Resolved): Promise<void> {
    try {
      const held = this.holds.get(upload.id);
      if (held) return await held.recheck(access);
      // What the upload holds already (made where it began, on another instance maybe) is its own.
      const quota = await access.quota.reserve(
        access,
        landing(target),
        upload.length - replacedBytes(target, upload.override),
        undefined,
        uploadHolder(upload.id),
      );
      this.holds.set(upload.id, quota);
    } catch (err) {
      await this.ctx.store.uploads.delete(upload.id);
      this.letGo(upload.id);
      await removeQuietly(upload.staging);
      throw err;
    }
  }

  /**
   * An upload ended (its file in place, or dropped): what it held against the quotas is free,
   * here and, once told, on the other instances that went on with it.
   */
  private letGo(id: string, tell = true): void {
    const hold = this.holds.get(id);
    // Held here, the hold's release forgets the upload's reservation; else it is forgotten apart.
    if (hold) hold.release();
    else quotaLedgerOf(this.ctx).forget(uploadHolder(id));
    this.holds.delete(id);
    if (tell && this.ctx.store.instance.shared) {
      this.ctx.store.notices
        .publish('uploads')
        .catch((err: unknown) =>
          this.ctx.log.warn({ err }, 'could not tell the other instances an upload ended'),
        );
    }
  }

  private async writeAt(
    upload: PendingUpload,
    offset: number,
    body: Readable,
    held: () => boolean,
  ): Promise<number> {
    const fh = await fs.open(upload.staging, 'r+').catch(() => {
      throw notFound('no upload in progress for this path');
    });
    try {
      const { size } = await fh.stat();
      if (size !== offset)
        throw conflict(`Upload-Offset ${offset} does not match the upload's offset ${size}`);
      return await appendBody(fh, offset, upload.length - offset, body, held).catch(async (err: unknown) => {
        // The part of this request that fitted is let go: a failed request holds no disk space,
        // and the upload resumes from the offset its client was last told.
        if (isDiskFull(err) && held()) await fh.truncate(offset).catch(() => undefined);
        throw err;
      });
    } finally {
      await fh.close();
    }
  }

  /** Moves the finished staging file over the target in one rename; returns the target's real path. */
  private async complete(
    access: FileAccess,
    upload: PendingUpload,
    stillAllowed?: (replacing: boolean) => Promise<unknown>,
  ): Promise<string> {
    try {
      // Rules or the tree may have changed while the bytes were coming in: check again.
      const virtual = access.viewPathOf(upload.path);
      if (virtual === undefined) throw notFound('no upload in progress for this path');
      const target = await access.open(virtual);
      try {
        if (target.stat?.isDirectory()) throw conflict('a folder with this name was created meanwhile');
        if ((target.stat || target.isSymlink) && !upload.override)
          throw conflict('a file with this name was created meanwhile');
        // A lock taken while the bytes were coming in holds the last step back too.
        await access.locks.assertWritable(access, target, { member: !target.linkStat });
        const settings = this.ctx.store.settings.get();
        const ledger = stagingLedgerOf(this.ctx.store);
        await fs.chmod(upload.staging, settings.fileMode);
        const quota =
          this.holds.get(upload.id) ??
          (await access.quota.holdFor(access, landing(target), undefined, uploadHolder(upload.id)));
        // Whatever stands at the name now (there when the upload began, or since) is replaced only
        // by an override of a user who may modify now.
        const replace = upload.override && may(access.perm, 'modify');
        const put = (folder: Pinned, name: string) =>
          replaceAtomically(
            ledger,
            this.stagingDir,
            upload,
            folder,
            name,
            quota,
            replace,
            async () => {
              await access.quota.beforeReplace?.(joinReal(folder.real, name));
              await assertUnmoved(access, folder, path.posix.dirname(target.virtual));
              await stillAllowed?.(replace);
            },
            access.replacedItem,
          );
        // A link at the target is replaced itself, never written through.
        if (target.isSymlink && target.linkFolder) {
          await put(target.linkFolder, target.name);
          return target.entry;
        }
        const place = await placeOf(target, settings.dirMode);
        try {
          await put(place.folder, place.name);
          return joinReal(place.folder.real, place.name);
        } finally {
          await place.release();
        }
      } finally {
        await target.close();
      }
    } finally {
      await this.ctx.store.uploads.delete(upload.id);
      this.letGo(upload.id);
      await removeQuietly(upload.staging);
    }
  }

  /**
   * DELETE: abandons the upload. The target was never touched, so there is nothing else to undo.
   * It takes the permission the upload was made with (create), not delete: File Browser's DELETE
   * removed the target itself, ours removes nothing but the caller's own staging file, and
   * upload-only accounts (create without delete) must be able to cancel what they started.
   */
  async cancel(user: StoredUser, rawPath: string): Promise<void> {
    const access = await this.access(user);
    const target = await access.resolve(rawPath);
    if (target.virtual === '/') throw forbidden();
    const upload = await this.pending(user, access, target);
    await this.serialised(upload.id, async () => {
      await this.ctx.store.uploads.delete(upload.id);
      this.letGo(upload.id);
      await removeQuietly(upload.staging);
    });
  }

  /**
   * Drops uploads that got no byte for `uploadsExpiry` before `now`: their records and staging
   * files go, and so do staging files of that age no record knows (left by a crash between
   * creating the file and recording it). Returns how many uploads were dropped.
   */
  async sweep(now = Date.now()): Promise<number> {
    // Uploads whose records went without them (their user deleted) hold nothing any more.
    await this.forgetEnded();
    await this.ctx.store.reservations.forgetEndedUploads();
    const before = now - this.ctx.config.uploadsExpiry * 1000;
    const stale = await this.ctx.store.uploads.stale(before);
    for (const upload of stale) {
      await this.ctx.store.uploads.delete(upload.id);
      this.letGo(upload.id);
      await removeQuietly(upload.staging);
    }
    const known = new Set((await this.ctx.store.uploads.all()).map((u) => path.basename(u.staging)));
    const names = await fs.readdir(this.stagingDir).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.endsWith('.part') || known.has(name)) continue;
      const file = path.join(this.stagingDir, name);
      const st = await fs.lstat(file).catch(() => undefined);
      if (st?.isFile() && st.mtimeMs < before) await removeQuietly(file);
    }
    return stale.length;
  }

  /**
   * Runs the requests of one upload one after the other: in this process in turn, and across the
   * instances of a shared database one at a time (423 to a request that comes through another
   * instance meanwhile, which tus clients retry).
   */
  private serialised<T>(id: string, fn: (lock: HeldLock) => Promise<T>): Promise<T> {
    const previous = this.locks.get(id) ?? Promise.resolve();
    const alone = async () => {
      const lock = await this.ctx.store.lockLine.tryHold(`upload:${id}`);
      if (!lock) throw new AppError('locked', 'another request is writing this upload: try again');
      try {
        return await fn(lock);
      } finally {
        await lock.release();
      }
    };
    const run = previous.then(alone, alone);
    const tail = run.catch(() => undefined);
    this.locks.set(id, tail);
    const forget = () => {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    };
    tail.then(forget, forget);
    return run;
  }
}

/** Where an upload's bytes land: a link at the target is replaced itself, never written through. */
function landing(target: Resolved): string {
  return target.isSymlink ? target.entry : target.real;
}

/** Bytes the file an upload replaces holds now (a link is replaced itself: nothing). */
function replacedBytes(target: Resolved, override: boolean): number {
  return override && !target.isSymlink && target.stat?.isFile() ? target.stat.size : 0;
}
