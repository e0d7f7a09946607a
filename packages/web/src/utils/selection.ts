/** Which entries of a listing are selected (by path) and where a Shift range starts. */
export interface Selection {
  readonly paths: ReadonlySet<string>;
  /** The entry last clicked without Shift: one end of the next Shift range. */
  readonly anchor: string | null;
}

export const EMPTY_SELECTION: Selection = { paths: new Set(), anchor: null };

export interface ClickModifiers {
  /** Ctrl or Meta held, or "select multiple" mode: the click adds or removes one entry. */
  toggle: boolean;
  /** Shift held: the click adds the range from the anchor. */
  range: boolean;
}

/** The double click (or double tap) window. */
export const DOUBLE_CLICK_MS = 300;

/**
 * The selection after a click on `order[index]`. A plain click selects that entry alone; a
 * toggle click adds or removes it; a Shift click adds every entry between the anchor and it
 * (in display order) to what is selected, like File Browser does.
 */
export function clickSelection(
  selection: Selection,
  order: readonly string[],
  index: number,
  modifiers: ClickModifiers,
): Selection {
  const path = order[index];
  if (path === undefined) return selection;
  const anchorIndex = selection.anchor === null ? -1 : order.indexOf(selection.anchor);

  if (modifiers.range && anchorIndex !== -1) {
    const paths = new Set(selection.paths);
    const [from, to] = anchorIndex <= index ? [anchorIndex, index] : [index, anchorIndex];
    for (let i = from; i <= to; i++) paths.add(order[i] as string);
    return { paths, anchor: selection.anchor };
  }
  if (modifiers.toggle || modifiers.range) {
    const paths = new Set(selection.paths);
    if (paths.has(path)) paths.delete(path);
    else paths.add(path);
    return { paths, anchor: path };
  }
  return { paths: new Set([path]), anchor: path };
}

export function selectAll(order: readonly string[]): Selection {
  return { paths: new Set(order), anchor: order[0] ?? null };
}

/** Drops what is no longer listed (after a reload), keeping the rest selected. */
export function pruneSelection(selection: Selection, order: readonly string[]): Selection {
  if (selection.paths.size === 0) return selection;
  const listed = new Set(order);
  const paths = new Set([...selection.paths].filter((path) => listed.has(path)));
  const anchor = selection.anchor !== null && listed.has(selection.anchor) ? selection.anchor : null;
  if (paths.size === selection.paths.size && anchor === selection.anchor) return selection;
  return { paths, anchor };
}

/** The selected entries in display order. */
export function selectedInOrder<T extends { path: string }>(items: readonly T[], selection: Selection): T[] {
  if (selection.paths.size === 0) return [];
  return items.filter((item) => selection.paths.has(item.path));
}

export interface LastClick {
  path: string;
  time: number;
}

/** Whether a click on `path` at `time` (ms) completes a double click started by `last`. */
export function isDoubleClick(last: LastClick | null, path: string, time: number): boolean {
  return last !== null && last.path === path && time - last.time >= 0 && time - last.time <= DOUBLE_CLICK_MS;
}
