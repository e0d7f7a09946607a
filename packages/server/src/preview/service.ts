import fsp from 'node:fs/promises';
import type { AppContext } from '../context.js';
import type { FileEvents } from '../files/change/events.js';
import { descriptorPath, isAnchored, openPinnedFile, type Pinned } from '../files/access/anchor.js';
import { etagOf } from '../files/listing/go-format.js';
import { detectType, readPinnedSample } from '../files/listing/file-type.js';
import { extensionOf } from '../files/listing/mime.js';
import { serverPaths } from '../files/access/private.js';
import type { Opened } from '../files/access/resolver.js';
import { PreviewCache } from './cache.js';
import {
  findFfmpeg,
  RESIZABLE,
  resizeImage,
  videoFrame,
  type PreviewImage,
  type PreviewSize,
} from './images.js';
import { trimMemory } from '../files/listing/native.js';
import { FairScheduler, poolShare } from '../heavy-work.js';

export type PreviewAnswer =
  /** Not an image (nor a video with ffmpeg at hand): 501. */
  | { kind: 'none' }
  /** Serve the file itself, as raw does. */
  | { kind: 'original' }
  /** A generated preview, with validators derived from the source file. */
  | { kind: 'generated'; image: PreviewImage; mtimeMs: number; etag: string };

export interface PreviewOptions {
  /** Folder of the disk cache; undefined runs without one. */
  cacheDir?: string;
  /** The ffmpeg executable; undefined when there is none (videos get no thumbnails). */
  ffmpeg?: string;
  /** Concurrent resizes (`--imageProcessors`). */
  processors: number;
  disableThumbnails: boolean;
  disablePreviewResize: boolean;
}

/** A preview being made (or waiting for a processor), shared by every request that wants it. */
interface Making {
  image: Promise<PreviewImage>;
  /** Requests still waiting whose client is there. */
  wanted: number;
  /** Takes it out of the processors' queue once nobody wants it. */
  abort: AbortController;
}

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

/** Quiet time after the last image before freed memory goes back (see `trimSoon`). */
const TRIM_AFTER_MS = 1000;

/**
 * Image previews (contract 6.2): thumbnails and big previews made with sharp, video frames with
 * ffmpeg, a disk cache keyed by real path, size and mtime, and at most `processors` resizes at a
 * time. Files are opened once, without following links, and read through that descriptor.
 */
export class PreviewService {
  readonly cache?: PreviewCache;
  /**
   * Resizes at once (`processors`), given to the users with previews waiting in turn (a gallery
   * of a thousand images never holds back another user's thumbnail), each also holding a place
   * of the thread pool's share for heavy work (`poolShare`).
   */
  private readonly limiter: FairScheduler;
  private readonly inflight = new Map<string, Making>();

  private trimTimer: NodeJS.Timeout | undefined;

  constructor(readonly options: PreviewOptions) {
    this.cache = options.cacheDir ? new PreviewCache(options.cacheDir) : undefined;
    const processors = Math.max(1, options.processors);
    this.limiter = new FairScheduler({ slots: processors, perOwner: processors, queuePerOwner: Infinity });
    this.limiter.on('idle', () => this.trimSoon());
  }

  /**
   * Hands the memory the images freed back to the system once a burst of them is over: sharp's
   * and libvips' threads leave it in glibc's arenas (31 MB after 200 thumbnails, see
   * bench/results/2026-11-26-thumbnails-memory-thumbmem.md). Waiting `TRIM_AFTER_MS` after the
   * limiter went idle lets a browser's next few thumbnails, asked for a moment later, count as
   * the same burst, so the trim (a walk over every arena) is paid once per burst, never per image.
   */
  private trimSoon(): void {
    clearTimeout(this.trimTimer);
    this.trimTimer = setTimeout(() => {
      if (this.limiter.runningCount() === 0 && this.limiter.waitingCount() === 0) trimMemory();
    }, TRIM_AFTER_MS);
    this.trimTimer.unref();
  }

  /** Previews being made and previews waiting for a free processor (the metrics gauges). */
  load(): { running: number; queued: number } {
    return { running: this.limiter.runningCount(), queued: this.limiter.waitingCount() };
  }

  /**
   * Sets the service up for a server: the cache folder (`--cacheDir`, by default `cache` beside
   * the database) and ffmpeg, looked up once on `pathEnv` (the server's PATH). Both are logged.
   */
  static async start(ctx: AppContext, pathEnv: string): Promise<PreviewService> {
    const { config, log } = ctx;
    const cacheDir = await prepareCacheDir(ctx);
    const ffmpeg = await findFfmpeg(pathEnv);
    if (ffmpeg) log.info(`previews: video thumbnails made with ${ffmpeg}`);
    else log.info('previews: ffmpeg is not on the PATH, so video files have no thumbnails');
    return new PreviewService({
      cacheDir,
      ffmpeg,
      processors: config.imageProcessors,
      disableThumbnails: config.disableThumbnails,
      disablePreviewResize: config.disablePreviewResize,
    });
  }

  /**
   * What `GET /api/preview/{size}` answers for an opened path the caller may read. `signal` says
   * the client went away: a preview nobody waits for any more leaves the processors' queue (with
   * the signal's reason) instead of holding its file and the requests behind it. `owner` is whose
   * turn a resize takes (heavy-work.ts).
   */
  async preview(
    r: Opened,
    size: PreviewSize,
    signal?: AbortSignal,
    owner = 'server',
  ): Promise<PreviewAnswer> {
    const node = r.node;
    if (!r.stat?.isFile() || !node) return { kind: 'none' };
    const disabled = size === 'thumb' ? this.options.disableThumbnails : this.options.disablePreviewResize;
    const { type } = await detectType(r.name, { size: r.stat.size, special: false }, true, () =>
      readPinnedSample(node),
    );
    if (type === 'image') {
      if (disabled || !RESIZABLE.has(extensionOf(r.name).toLowerCase())) return { kind: 'original' };
      return this.generate(node, r.real, size, signal, owner, (input) => resizeImage(input, size));
    }
    const ffmpeg = this.options.ffmpeg;
    if (type === 'video' && ffmpeg && !disabled) {
      return this.generate(node, r.real, size, signal, owner, (input, fd) =>
        videoFrame(ffmpeg, { path: input, fd: isAnchored() ? fd : undefined }, size),
      );
    }
    return { kind: 'none' };
  }

  private async generate(
    node: Pinned,
    realPath: string,
    size: PreviewSize,
    signal: AbortSignal | undefined,
    owner: string,
    make: (input: string, fd: number) => Promise<PreviewImage>,
  ): Promise<PreviewAnswer> {
    const fh = await openPinnedFile(node);
    try {
      const st = await fh.stat({ bigint: true });
      const mtimeMs = Number(st.mtimeNs / 1_000_000n);
      const etag = `"${etagOf(st).slice(1, -1)}-${size}"`;
      const file = this.cache?.file(realPath, size, Number(st.size), mtimeMs);
      const cached = file && (await this.cache!.read(file));
      if (cached && cached.length > 0) {
        const type = cached.subarray(0, 4).equals(PNG_MAGIC) ? 'image/png' : 'image/jpeg';
        return { kind: 'generated', image: { data: cached, type }, mtimeMs, etag };
      }
      const key = file ?? `${realPath}\0${size}\0${st.size}\0${mtimeMs}`;
      // One that nobody wanted any more may be leaving the queue: this request makes its own.
      let making = this.inflight.get(key);
      if (making?.abort.signal.aborted) making = undefined;
      const leave = making && this.join(making, signal);
      try {
        if (!making) {
          // Named through its descriptor where that works: the maker reads exactly the file checked.
          const input = isAnchored() ? descriptorPath(fh.fd) : realPath;
          const abort = new AbortController();
          const mine: Making = { image: Promise.resolve(undefined!), wanted: 0, abort };
          // Counted before it asks for a processor: one whose client already left takes none.
          const left = this.join(mine, signal);
          mine.image = this.limiter.run(
            owner,
            () => poolShare.run(owner, () => make(input, fh.fd), abort.signal),
            abort.signal,
          );
          making = mine;
          this.inflight.set(key, mine);
          // The maker reads through this request's descriptor: it waits for the end even when its
          // own client left, as long as another request still wants the preview.
          try {
            const image = await mine.image;
            if (file) await this.cache!.write(file, image.data).catch(() => undefined);
          } finally {
            left();
            if (this.inflight.get(key) === mine) this.inflight.delete(key);
          }
        }
        return { kind: 'generated', image: await making.image, mtimeMs, etag };
      } finally {
        leave?.();
      }
    } finally {
      await fh.close();
    }
  }

  /** Counts a request as wanting `making` until its client leaves; returns how to stop counting. */
  private join(making: Making, signal: AbortSignal | undefined): () => void {
    if (signal?.aborted) {
      if (making.wanted === 0) making.abort.abort(signal.reason);
      return () => undefined;
    }
    making.wanted++;
    if (!signal) return () => undefined;
    const gone = () => {
      if (--making.wanted === 0) making.abort.abort(signal.reason);
    };
    signal.addEventListener('abort', gone, { once: true });
    return () => signal.removeEventListener('abort', gone);
  }

  /** Drops the cached previews of a path and of everything below it. */
  async invalidate(realPath: string): Promise<void> {
    await this.cache?.invalidate(realPath);
  }

  /** Listeners that keep the cache in step with writes, moves and deletes. */
  fileEvents(): FileEvents {
    return {
      changed: (p) => this.invalidate(p),
      deleted: (p) => this.invalidate(p),
      moved: async (from, to) => {
        await Promise.all([this.invalidate(from), this.invalidate(to)]);
      },
    };
  }
}

/**
 * The cache folder (`--cacheDir`, by default beside the database), created with mode 0700. Inside
 * the served folder it is one of the server's private paths, which no user can reach.
 */
async function prepareCacheDir(ctx: AppContext): Promise<string | undefined> {
  const dir = serverPaths(ctx.config).cacheDir;
  try {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    ctx.log.info(`previews: cached in ${dir}`);
    return dir;
  } catch (err) {
    ctx.log.warn({ err }, `previews: the cache folder ${dir} cannot be used; previews are not cached`);
    return undefined;
  }
}
