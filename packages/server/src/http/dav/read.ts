import { assertMay } from '../../auth/policy.js';
import { notFound } from '../../errors.js';
import { openPinnedFile } from '../../files/access/anchor.js';
import { sendFile } from '../raw/send-file.js';
import type { DavRequest } from './request.js';

/**
 * GET and HEAD of a file through the raw download machinery (ranges, validators, safety
 * headers). A folder answers a short note: WebDAV clients list folders with PROPFIND.
 */
export async function handleGet(dav: DavRequest) {
  const r = await dav.access.open(dav.virtual);
  let handedOver = false;
  try {
    if (!r.stat || !r.node) throw notFound();
    if (r.stat.isDirectory()) {
      return dav.reply
        .code(200)
        .type('text/plain; charset=utf-8')
        .send('This is a WebDAV folder: open it with a WebDAV client.\n');
    }
    assertMay(dav.access.perm, 'download');
    const fh = await openPinnedFile(r.node);
    handedOver = true;
    await r.close();
    return await sendFile(dav.request, dav.reply, fh, { name: r.name, inline: true });
  } finally {
    if (!handedOver) await r.close();
  }
}
