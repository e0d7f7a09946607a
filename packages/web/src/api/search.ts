import type { SearchHit } from '@filebrowser/contract';
import { readJsonLines } from '../utils/json-lines';
import { encodePath } from '../utils/paths';
import { ApiError, request } from './client';

/**
 * Searches `dir` (a virtual folder path) and yields the hits in batches as the server finds them.
 * The answer is JSON lines with blank keep-alive lines in between (contract 7); a failure after
 * the answer started arrives as a plain-text line such as "500 Internal Server Error".
 */
export async function* searchFiles(
  dir: string,
  query: string,
  signal?: AbortSignal,
): AsyncGenerator<SearchHit[]> {
  const folder = dir.endsWith('/') ? dir : `${dir}/`;
  const response = await request(`/api/search${encodePath(folder)}?query=${encodeURIComponent(query)}`, {
    signal,
  });
  if (!response.body) return;
  yield* readJsonLines<SearchHit>(response.body, (line) => {
    const status = Number(/^(\d{3}) /.exec(line)?.[1] ?? 500);
    throw new ApiError(status, line.trim());
  });
}
