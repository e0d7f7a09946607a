/**
 * The server's native addon (native/fb_native.c, built by npm at install time with node-gyp), when
 * there is one: it reads a pinned folder and stats its entries in C (Node has no `fstatat`), renames
 * with `renameat2`'s flags (Node's rename has none) and hands glibc's freed memory back to the
 * system. Everything it does has a JavaScript way too,
 * taken when the addon is missing or fails to load (another OS, no compiler at install time) or
 * when `FB_NATIVE=off` asks for it (docs/configuration.md).
 */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** A folder read by the addon: see `NativeAddon.readFolderStats`. */
export interface FolderStats {
  names: Uint8Array;
  count: number;
  data: Float64Array;
  ms: number;
}

export interface NativeAddon {
  /**
   * The entries of the folder held by descriptor `fd` (an `O_PATH` pin will do), in byte order of
   * their names, without `.` and `..`: the names joined with NUL as UTF-8 bytes, and `FIELDS`
   * numbers per entry laid out as files/dir-layout.ts says, each stat'ed relative to `fd` without
   * following links. Runs on the thread pool; rejects with an fs-style error (`code`, `errno`,
   * `syscall`). `ms`: time on the job less the time its thread waited for a core.
   */
  readFolderStats(fd: number): Promise<FolderStats>;
  /** `malloc_trim(0)`: whether memory went back to the system (false where there is no glibc). */
  trimMemory(): boolean;
  /**
   * `renameat2(from, to, flags)` on the thread pool (`RENAME_NOREPLACE` 1, `RENAME_EXCHANGE` 2),
   * rejecting with an fs-style error. Missing from addons built before it existed.
   */
  renameEntry?(from: string, to: string, flags: number): Promise<void>;
}

/**
 * Where node-gyp puts it: packages/server/native/build, three folders up from this module in
 * src/files/listing/, one up from the bundle in dist/.
 */
const ADDON_URL = new URL(
  import.meta.url.endsWith('.ts')
    ? '../../../native/build/Release/fb_native.node'
    : '../native/build/Release/fb_native.node',
  import.meta.url,
);

function load(): { addon?: NativeAddon; reason: string } {
  if (process.env.FB_NATIVE === 'off') return { reason: 'FB_NATIVE=off' };
  try {
    const addon = createRequire(import.meta.url)(fileURLToPath(ADDON_URL)) as NativeAddon;
    return { addon, reason: 'loaded' };
  } catch (err) {
    return { reason: (err as Error).message.split('\n')[0]! };
  }
}

const loaded = load();

/** The addon, or undefined when the JavaScript ways are taken. */
export function nativeAddon(): NativeAddon | undefined {
  return loaded.addon;
}

/** Why the addon is or is not used, for the one line the server logs about it at start. */
export function nativeStatus(): string {
  return loaded.addon
    ? 'folders are read in C (native addon loaded)'
    : `folders are read in JavaScript (native addon not used: ${loaded.reason})`;
}

/** Hands freed glibc memory back to the system, where the addon can; false otherwise. */
export function trimMemory(): boolean {
  return loaded.addon?.trimMemory() ?? false;
}
