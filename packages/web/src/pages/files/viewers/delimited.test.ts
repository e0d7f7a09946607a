import { describe, expect, it } from 'vitest';
import { detectSeparator, fallbackSeparator, isDelimitedName, parseDelimited } from './delimited';

describe('parseDelimited', () => {
  it('splits records on LF, CRLF and a lone CR, with or without a final line break', () => {
    expect(parseDelimited('a,b\n1,2', ',')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(parseDelimited('a,b\r\n1,2\r\n', ',')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(parseDelimited('a,b\r1,2\r', ',')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('keeps separators, doubled quotes and line breaks inside quoted fields', () => {
    const text = 'name,note\n"Smith, J.","said ""hi""\nand left"\n"",x\n';
    expect(parseDelimited(text, ',')).toEqual([
      ['name', 'note'],
      ['Smith, J.', 'said "hi"\nand left'],
      ['', 'x'],
    ]);
  });

  it('keeps CRLF inside a quoted field as it is', () => {
    expect(parseDelimited('"a\r\nb",c\r\n', ',')).toEqual([['a\r\nb', 'c']]);
  });

  it('skips blank lines but keeps empty fields and a record of one quoted empty field', () => {
    expect(parseDelimited('a,b\n\n\n,\n""\n\r\n1,2\n', ',')).toEqual([
      ['a', 'b'],
      ['', ''],
      [''],
      ['1', '2'],
    ]);
    expect(parseDelimited('', ',')).toEqual([]);
    expect(parseDelimited('\n\n', ',')).toEqual([]);
  });

  it('reads a quote inside an unquoted field as text, and an unclosed quote to the end', () => {
    expect(parseDelimited('5" disk,ok\n', ',')).toEqual([['5" disk', 'ok']]);
    expect(parseDelimited('"open,end\nstill', ',')).toEqual([['open,end\nstill']]);
  });

  it('splits on the separator it is given only', () => {
    expect(parseDelimited('a;b,c\td|e', ';')).toEqual([['a', 'b,c\td|e']]);
    expect(parseDelimited('a;b,c\td|e', '\t')).toEqual([['a;b,c', 'd|e']]);
  });

  it('stops after maxRecords', () => {
    expect(parseDelimited('1\n2\n3\n4', ',', 2)).toEqual([['1'], ['2']]);
  });
});

describe('detectSeparator', () => {
  it('finds each of the four separators', () => {
    expect(detectSeparator('a,b,c\n1,2,3\n')).toBe(',');
    expect(detectSeparator('a;b;c\n1;2;3\n')).toBe(';');
    expect(detectSeparator('a\tb\tc\n1\t2\t3\n')).toBe('\t');
    expect(detectSeparator('a|b|c\n1|2|3\n')).toBe('|');
  });

  it('prefers the separator that splits every line evenly over one that splits more', () => {
    // Decimal commas make the comma split unevenly; the semicolon is the separator.
    const text = 'price;qty\n1,50;3\n2;4,25\n10,00;1\n';
    expect(detectSeparator(text)).toBe(';');
  });

  it('ignores separators inside quoted fields', () => {
    const text = 'name;city\n"Doe; John";"Paris, FR"\n"Roe; Ann";"Rome, IT"\n';
    expect(detectSeparator(text)).toBe(';');
  });

  it('falls back when no separator splits anything', () => {
    expect(detectSeparator('just one column\nand another\n')).toBe(',');
    expect(detectSeparator('single\n', '\t')).toBe('\t');
    expect(detectSeparator('')).toBe(',');
  });
});

describe('file names', () => {
  it('opens .csv and .tsv as tables, a tab assumed for .tsv', () => {
    expect(isDelimitedName('data.CSV')).toBe(true);
    expect(isDelimitedName('data.tsv')).toBe(true);
    expect(isDelimitedName('data.csv.txt')).toBe(false);
    expect(fallbackSeparator('x.tsv')).toBe('\t');
    expect(fallbackSeparator('x.csv')).toBe(',');
  });
});
