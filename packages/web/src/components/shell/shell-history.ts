/**
 * Command history of the shell panel, browsed with the arrow keys as in a terminal: Up walks back
 * from the newest line, Down walks forward and, past the newest, gives back what was being typed
 * before browsing started.
 */

/** Lines kept; older ones are dropped. */
export const MAX_HISTORY = 100;

export interface HistoryCursor {
  /** Position in the history; `items.length` means "not browsing": the line being typed. */
  index: number;
  /** What was typed before browsing started, restored when walking past the newest entry. */
  draft: string;
}

export interface HistoryMove {
  cursor: HistoryCursor;
  /** The text the input shows after the move. */
  text: string;
}

/** The cursor of a history nobody is browsing yet. */
export function freshCursor(items: readonly string[]): HistoryCursor {
  return { index: items.length, draft: '' };
}

/** Arrow Up: the previous line, or nothing when already at the oldest one (or the history is empty). */
export function historyUp(
  items: readonly string[],
  cursor: HistoryCursor,
  current: string,
): HistoryMove | undefined {
  const index = Math.min(cursor.index, items.length);
  if (index <= 0) return undefined;
  const draft = index === items.length ? current : cursor.draft;
  return { cursor: { index: index - 1, draft }, text: items[index - 1] as string };
}

/** Arrow Down: the next line, the draft past the newest one, or nothing when not browsing. */
export function historyDown(items: readonly string[], cursor: HistoryCursor): HistoryMove | undefined {
  if (cursor.index >= items.length) return undefined;
  const index = cursor.index + 1;
  return {
    cursor: { index, draft: cursor.draft },
    text: index === items.length ? cursor.draft : (items[index] as string),
  };
}

/** The history after running `line`: a repeat of the newest line is not added again. */
export function addToHistory(items: readonly string[], line: string, max = MAX_HISTORY): string[] {
  if (items.at(-1) === line) return [...items];
  const next = [...items, line];
  return next.length > max ? next.slice(next.length - max) : next;
}
