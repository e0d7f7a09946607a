import { deflateRawSync } from 'node:zlib';
import type { AccessView } from '../access/access-view.js';
import type { Pinned } from '../access/anchor.js';
import { loopTurn } from '../../heavy-work.js';
import type { DirSnapshot } from './dir-snapshot.js';
import type { ListingCache } from './listing-cache.js';
import {
  type Computed,
  type ListingIo,
  type ListingOptions,
  computeListing,
  defaultListingIo,
  itemOf,
  rowAt,
} from './folder-listing.js';

/**
 * A listing as JSON text in pieces: whole when small or kept, streamed one piece at a time with a
 * turn of the event loop between two when big.
 */

/** Listings with more items than this are streamed (see `ListingJson`); a power of two. */
export const STREAM_FROM = 16_384;
/** Items per streamed piece: about 100 KB of JSON. */
const PIECE_ITEMS = 512;

/**
 * A listing as JSON text (`"items":[…],"numDirs":N,"numFiles":M`, UTF-8), in pieces. `length` is
 * their total when it is known before sending: the listing was made whole (from the
 * `ListingCache` or small enough to render at once). Without it, the pieces are made one at a time
 * as they are read, with a turn of the event loop between two, so that a listing of 100,000 items
 * neither holds its 100,000 items and their 19 MB of text at once nor keeps other requests waiting
 * while it is rendered.
 */
export type ListingJson = { length: number; pieces: Iterable<Buffer> } | { pieces: AsyncIterable<Buffer> };

/** The JSON text of a computed listing, `PIECE_ITEMS` items a piece. */
function* listingText(listing: Computed): Generator<string> {
  const { order, virtualPrefix } = listing;
  // JSON.stringify of the array is '[' + its items' JSON joined with ',' + ']': the same bytes.
  let text = '"items":[';
  for (let i = 0; i < order.length; i++) {
    if (i > 0) text += ',';
    text += JSON.stringify(itemOf(virtualPrefix, rowAt(listing, order[i]!)));
    if (i % PIECE_ITEMS === PIECE_ITEMS - 1 && i < order.length - 1) {
      yield text;
      text = '';
    }
  }
  yield `${text}],"numDirs":${listing.numDirs},"numFiles":${listing.numFiles}`;
}

/**
 * `listDirectory` as JSON text, taken from the `ListingCache` when the folder is exactly as it was
 * when the text was made, streamed when it is big (see `ListingJson`).
 */
export async function listDirectoryJson(
  access: AccessView,
  dir: Pinned,
  dirVirtual: string,
  opts: ListingOptions,
  deps: ListingIo = defaultListingIo,
): Promise<ListingJson> {
  const dev = opts.dev ?? dir.stat.dev;
  const snapshot = await deps.reader.read(dir, dev, access.owner);
  const key = JSON.stringify([
    dir.real,
    dirVirtual,
    opts.readHeader,
    opts.sorting.by,
    opts.sorting.asc,
    access.rules.fingerprint,
  ]);
  const cached = deps.rendered.get(key, snapshot);
  if (cached) {
    snapshot.release();
    return cached;
  }
  let listing: Computed;
  try {
    listing = await computeListing(access, dir, dirVirtual, opts, dev, snapshot, deps);
  } catch (err) {
    snapshot.release();
    throw err;
  }
  if (listing.order.length > (deps.streamFrom ?? STREAM_FROM)) {
    // The listing's numbers and names are the snapshot's: it is given back once the last piece is made.
    const keep = listing.cacheable ? { key, cache: deps.rendered } : undefined;
    return { pieces: streamText(listing, snapshot, keep) };
  }
  const json = Buffer.from([...listingText(listing)].join(''));
  if (listing.cacheable)
    deps.rendered.set(key, snapshot, { pieces: [json], packed: false, length: json.length });
  else snapshot.release();
  return { length: json.length, pieces: [json] };
}

/**
 * The pieces of a big listing made from `snapshot`, each made when the previous one has been
 * taken. With `keep`, the pieces sent are stored in the cache with the snapshot once the last has
 * gone, if the whole fits; a client that leaves earlier stores nothing. They are kept deflated
 * (see `ListingCache`), each on its own, as it is sent: the text of a big folder is never held
 * whole.
 */
async function* streamText(
  listing: Computed,
  snapshot: DirSnapshot,
  keep?: { key: string; cache: ListingCache },
): AsyncGenerator<Buffer> {
  let kept: Buffer[] | undefined = keep ? [] : undefined;
  let weight = keep ? snapshot.weight : 0;
  let length = 0;
  let complete = false;
  try {
    let first = true;
    for (const text of listingText(listing)) {
      if (!first) await loopTurn();
      first = false;
      const piece = Buffer.from(text);
      if (kept) {
        const packed = deflateRawSync(piece, { level: 1 });
        weight += packed.length;
        length += piece.length;
        if (keep!.cache.fits(weight)) kept.push(packed);
        else kept = undefined;
      }
      yield piece;
    }
    complete = true;
  } finally {
    if (keep && complete && kept) keep.cache.set(keep.key, snapshot, { pieces: kept, packed: true, length });
    else snapshot.release();
  }
}
