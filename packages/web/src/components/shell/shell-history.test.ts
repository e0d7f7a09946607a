import { describe, expect, it } from 'vitest';
import {
  addToHistory,
  freshCursor,
  historyDown,
  historyUp,
  MAX_HISTORY,
  type HistoryCursor,
} from './shell-history';

/** Presses the keys in order from a fresh cursor, returning the input text after each. */
function press(items: string[], keys: Array<'up' | 'down'>, typed = ''): string[] {
  let cursor: HistoryCursor = freshCursor(items);
  let text = typed;
  return keys.map((key) => {
    const move = key === 'up' ? historyUp(items, cursor, text) : historyDown(items, cursor);
    if (move) {
      cursor = move.cursor;
      text = move.text;
    }
    return text;
  });
}

describe('shell history', () => {
  const items = ['ls', 'echo one', 'du -sh'];

  it('walks back from the newest line with Up and stops at the oldest', () => {
    expect(press(items, ['up', 'up', 'up', 'up'])).toEqual(['du -sh', 'echo one', 'ls', 'ls']);
  });

  it('walks forward with Down and gives back the line being typed past the newest', () => {
    expect(press(items, ['up', 'up', 'down', 'down', 'down'], 'ec')).toEqual([
      'du -sh',
      'echo one',
      'du -sh',
      'ec',
      'ec',
    ]);
  });

  it('does nothing on Down when not browsing, nor on Up with an empty history', () => {
    expect(historyDown(items, freshCursor(items))).toBeUndefined();
    expect(historyUp([], freshCursor([]), 'x')).toBeUndefined();
  });

  it('keeps the draft taken at the first Up, not what a later line shows', () => {
    let move = historyUp(items, freshCursor(items), 'draft')!;
    move = historyUp(items, move.cursor, move.text)!;
    move = historyDown(items, move.cursor)!;
    move = historyDown(items, move.cursor)!;
    expect(move.text).toBe('draft');
  });

  it('adds lines, skips an immediate repeat and keeps the newest ones', () => {
    expect(addToHistory(['ls'], 'ls')).toEqual(['ls']);
    expect(addToHistory(['ls'], 'pwd')).toEqual(['ls', 'pwd']);
    expect(addToHistory(['ls', 'pwd'], 'ls')).toEqual(['ls', 'pwd', 'ls']);
    const full = Array.from({ length: MAX_HISTORY }, (_, i) => `echo ${i}`);
    const next = addToHistory(full, 'last');
    expect(next).toHaveLength(MAX_HISTORY);
    expect(next[0]).toBe('echo 1');
    expect(next.at(-1)).toBe('last');
  });
});
