import { describe, expect, it } from 'vitest';
import { isNearBottom, SEARCH_PAGE_SIZE, shownCount } from './search-paging';

describe('isNearBottom', () => {
  const box = (scrollTop: number) => ({ scrollTop, clientHeight: 400, scrollHeight: 2000 });

  it('is true within 100 px of the end', () => {
    expect(isNearBottom(box(1500))).toBe(true);
    expect(isNearBottom(box(1499))).toBe(false);
    expect(isNearBottom(box(1600))).toBe(true);
  });

  it('is true for a list that does not scroll at all', () => {
    expect(isNearBottom({ scrollTop: 0, clientHeight: 400, scrollHeight: 300 })).toBe(true);
  });
});

describe('shownCount', () => {
  it('pages by 50', () => {
    expect(SEARCH_PAGE_SIZE).toBe(50);
    expect(shownCount(50, 180, true)).toBe(100);
    expect(shownCount(100, 180, true)).toBe(150);
  });

  it('stays put away from the bottom', () => {
    expect(shownCount(50, 180, false)).toBe(50);
  });

  it('stays put when every result is drawn', () => {
    expect(shownCount(50, 50, true)).toBe(50);
    expect(shownCount(50, 12, true)).toBe(50);
  });
});
