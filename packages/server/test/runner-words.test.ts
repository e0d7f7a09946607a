import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CommandLineError, splitCommandLine, splitWords } from '../src/runner/words.js';

/** Quotes a string for a POSIX shell: the inverse the splitter must undo. */
const shellQuote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

describe('splitCommandLine', () => {
  it('splits on blanks', () => {
    expect(splitCommandLine('  ls   -la\tfoo\nbar ')).toEqual(['ls', '-la', 'foo', 'bar']);
    expect(splitCommandLine('')).toEqual([]);
    expect(splitCommandLine(' \t\n ')).toEqual([]);
  });

  it('keeps every shell metacharacter inside words, unexpanded', () => {
    expect(splitCommandLine('echo a;touch x')).toEqual(['echo', 'a;touch', 'x']);
    expect(splitCommandLine('a&&b a||b a|b a&b')).toEqual(['a&&b', 'a||b', 'a|b', 'a&b']);
    expect(splitCommandLine('a>b a>>b a<b 2>&1 <<EOF')).toEqual(['a>b', 'a>>b', 'a<b', '2>&1', '<<EOF']);
    expect(splitCommandLine('$HOME ${HOME} $(id) `id` $((1+1))')).toEqual([
      '$HOME',
      '${HOME}',
      '$(id)',
      '`id`',
      '$((1+1))',
    ]);
    expect(splitCommandLine('* ? [a] {a,b} ~ ~root !! #x (a) a=b')).toEqual([
      '*',
      '?',
      '[a]',
      '{a,b}',
      '~',
      '~root',
      '!!',
      '#x',
      '(a)',
      'a=b',
    ]);
  });

  it('follows POSIX quoting', () => {
    expect(splitCommandLine(`'a b' "c d" e\\ f`)).toEqual(['a b', 'c d', 'e f']);
    expect(splitCommandLine(`'a"b' "a'b" 'a\\b'`)).toEqual(['a"b', "a'b", 'a\\b']);
    expect(splitCommandLine(`"a\\"b" "a\\\\b" "a\\$b" "a\\\`b" "a\\xb"`)).toEqual([
      'a"b',
      'a\\b',
      'a$b',
      'a`b',
      'a\\xb',
    ]);
    expect(splitCommandLine(`a'b'"c"d`)).toEqual(['abcd']);
    expect(splitCommandLine(`'' "" x`)).toEqual(['', '', 'x']);
    expect(splitCommandLine('a\\\nb c \\\n d')).toEqual(['ab', 'c', 'd']);
  });

  it('refuses unbalanced quotes, a lone trailing backslash and NUL', () => {
    expect(() => splitCommandLine(`echo 'x`)).toThrow(new CommandLineError('unterminated single quote'));
    expect(() => splitCommandLine(`echo "x`)).toThrow(new CommandLineError('unterminated double quote'));
    expect(() => splitCommandLine('echo x\\')).toThrow(CommandLineError);
    expect(() => splitCommandLine('echo \0')).toThrow(CommandLineError);
  });

  it('marks words a shell would not expand', () => {
    expect(splitWords(`$A "$A" '$A' \\$A`).map((w) => w.verbatim)).toEqual([false, false, true, true]);
  });

  it('undoes shell quoting of any words (property)', () => {
    const word = fc.string({ unit: 'grapheme', maxLength: 20 }).filter((s) => !s.includes('\0'));
    fc.assert(
      fc.property(fc.array(word, { maxLength: 8 }), (words) => {
        expect(splitCommandLine(words.map(shellQuote).join(' '))).toEqual(words);
      }),
    );
  });

  it('never splits a word that has no blank, quote or backslash (property)', () => {
    const plain = fc
      .string({ unit: 'binary', minLength: 1, maxLength: 30 })
      .filter((s) => !/[\s'"\\\0]/.test(s));
    fc.assert(
      fc.property(plain, (s) => {
        expect(splitCommandLine(`cmd ${s}`)).toEqual(['cmd', s]);
      }),
    );
  });
});
