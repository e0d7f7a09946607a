/** The quick-type chips of the search overlay: the `type:` word each one adds to the query. */
export const QUICK_TYPES = [
  { type: 'image', label: 'search.images', icon: 'insert_photo' },
  { type: 'audio', label: 'search.music', icon: 'volume_up' },
  { type: 'video', label: 'search.video', icon: 'movie' },
  { type: 'pdf', label: 'search.pdf', icon: 'picture_as_pdf' },
] as const;

export type QuickType = (typeof QUICK_TYPES)[number]['type'];

/**
 * Puts `type:<type>` in front of the query unless it is already there. The rest of the text stays
 * as typed (a quoted name keeps its inner spaces), but exactly one space follows the filter: the
 * server splits words on each space, and an empty word would match every name (contract 7).
 */
export function insertTypeFilter(query: string, type: string): string {
  const token = `type:${type}`;
  if (query.split(' ').includes(token)) return query;
  return `${token} ${query.replace(/^ +/, '')}`;
}

/** Whether the text is worth sending: an empty search does nothing. */
export function isRunnable(query: string): boolean {
  return query.trim() !== '';
}
