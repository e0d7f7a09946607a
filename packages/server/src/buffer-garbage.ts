import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Node's HTTP parser copies every piece of a request body (up to 64 KiB) into a Buffer of its
 * own, which is freed only when a collection finds it dead. V8 (Node 20) starts a young
 * collection for such Buffers only once 32 MB of them are young, and until a collection frees
 * them it counts them as growth of the old generation: with the old generation held to 1.5
 * times what survived (`startup-memory.ts`), a server with 18 MB alive has about 11 MB of room,
 * so once one full collection had set that room, a fast upload set off a full collection after
 * every few young ones (runs of 16–50 in a 1 GiB upload, 1–2 s more CPU) and held up to 32 MB
 * of dead pieces at a time. So a young collection is started as soon as the memory outside the
 * heap has grown by `BUFFER_GARBAGE_BUDGET` since the lowest it was seen since the last one: the
 * natural collections come first when the program makes enough garbage of its own, and bodies
 * held by slow writers are not collected again and again. Archives' pieces (file reads, deflated
 * blocks) go the same way.
 */
export const BUFFER_GARBAGE_BUDGET = 8 * 1024 * 1024;

/** Bytes of bodies between two looks at the memory outside the heap (the look is cheap, not free). */
const LOOK_EVERY = 1024 * 1024;

type Collect = () => void;
let collect: Collect | undefined;
let sinceLook = 0;
let floor = Infinity;

/**
 * V8's `gc` function, made once, with the first large body (a server that receives none never
 * pays for the extra context, about 2 MB): the flag installs it in contexts made after it is set.
 */
function youngCollector(): Collect {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void;
    return () => gc({ type: 'minor' });
  } catch {
    return () => undefined;
  }
}

/**
 * Called for every large Buffer that dies as soon as it has been passed on: each piece of a
 * request body streamed to disk, and each piece of an archive on its way to the socket (the
 * archive rows left 30-40 MB of such pieces uncollected).
 */
export function shortLivedBuffer(bytes: number): void {
  sinceLook += bytes;
  if (sinceLook < LOOK_EVERY) return;
  sinceLook = 0;
  const external = getHeapStatistics().external_memory;
  floor = Math.min(floor, external);
  if (external - floor < BUFFER_GARBAGE_BUDGET) return;
  (collect ??= youngCollector())();
  floor = getHeapStatistics().external_memory;
}
