import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import util from 'node:util';

/** The addon that `native/build-sendfile.mjs` compiles from `native/sendfile.c`. */
export interface SendfileAddon {
  /**
   * Sends up to `count` bytes of the file from `offset` on a pool thread; fewer when the socket
   * stays full for `waitMs`. Resolves with the bytes sent, or with -errno.
   */
  send(socketFd: number, fileFd: number, offset: number, count: number, waitMs: number): Promise<number>;
}

/** Loads a built addon; undefined when it is missing or does not load on this system. */
export function loadSendfile(file: string | URL): SendfileAddon | undefined {
  try {
    const addon = createRequire(import.meta.url)(
      typeof file === 'string' ? file : fileURLToPath(file),
    ) as Partial<SendfileAddon>;
    return typeof addon.send === 'function' ? (addon as SendfileAddon) : undefined;
  } catch {
    return undefined;
  }
}

let bundled: SendfileAddon | undefined | null = null;

/** The addon beside the bundle (dist/sendfile.node), when the build could compile it. */
export function bundledSendfile(): SendfileAddon | undefined {
  if (bundled === null) bundled = loadSendfile(new URL('./sendfile.node', import.meta.url));
  return bundled;
}

/**
 * The descriptor the kernel may write file bytes to: a plain TCP socket's. A TLS socket
 * encrypts in Node, so its bytes must pass through JavaScript. `_handle` is Node's libuv handle;
 * there is no public way to the descriptor.
 */
export function socketFd(socket: Socket | null): number | undefined {
  if (!socket || (socket as { encrypted?: boolean }).encrypted || socket.destroyed) return undefined;
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** `addon.send`, with a failure as an error carrying its code (EPIPE, ECONNRESET, ...). */
export async function sendFileBytes(
  addon: SendfileAddon,
  socket: number,
  file: number,
  offset: number,
  count: number,
  waitMs: number,
): Promise<number> {
  const sent = await addon.send(socket, file, offset, count, waitMs);
  if (sent >= 0) return sent;
  const code = util.getSystemErrorName(sent);
  throw Object.assign(new Error(`sendfile failed: ${code}`), { code, errno: sent });
}
