/** Results drawn at first, and added each time the list is scrolled near its end (spec 9). */
export const SEARCH_PAGE_SIZE = 50;
/** How close to the bottom (in px) counts as near the end. */
export const NEAR_BOTTOM_PX = 100;

export interface ScrollBox {
  scrollTop: number;
  clientHeight: number;
  scrollHeight: number;
}

export function isNearBottom(box: ScrollBox, threshold = NEAR_BOTTOM_PX): boolean {
  return box.scrollTop + box.clientHeight >= box.scrollHeight - threshold;
}

/** How many results to draw: one more page when the list is near its end and more results wait. */
export function shownCount(shown: number, total: number, nearBottom: boolean): number {
  if (!nearBottom || shown >= total) return shown;
  return shown + SEARCH_PAGE_SIZE;
}
