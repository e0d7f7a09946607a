/** The separators a CSV/TSV file is tried with, in the order that wins a tie. */
export const SEPARATORS = [',', ';', '\t', '|'] as const;
export type Separator = (typeof SEPARATORS)[number];

/** How many records decide the separator: enough to see a pattern, little enough for huge files. */
const SAMPLE_RECORDS = 20;

/**
 * Records of delimited text after RFC 4180: quoted fields may hold the separator, line breaks and
 * doubled quotes. It is lenient where files in the wild are not: a quote inside an unquoted field
 * is kept as text, a lone CR ends a record like CRLF, and blank lines are skipped rather than read
 * as one-empty-field records.
 */
export function parseDelimited(text: string, separator: string, maxRecords = Infinity): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  // Whether the current field began with a quote (a quote later in it is just a character).
  let inQuotes = false;
  let i = 0;
  const endRecord = () => {
    record.push(field);
    const blank = record.length === 1 && record[0] === '' && !quoted;
    if (!blank) records.push(record);
    record = [];
    field = '';
    quoted = false;
  };
  while (i < text.length && records.length < maxRecords) {
    const char = text[i]!;
    if (inQuotes) {
      if (char === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        inQuotes = false;
      } else {
        field += char;
      }
      i += 1;
      continue;
    }
    if (char === '"' && field === '' && !quoted) {
      inQuotes = true;
      quoted = true;
    } else if (char === separator) {
      record.push(field);
      field = '';
      quoted = false;
    } else if (char === '\n' || char === '\r') {
      endRecord();
      if (char === '\r' && text[i + 1] === '\n') i += 1;
    } else {
      field += char;
    }
    i += 1;
  }
  if (records.length < maxRecords && (field !== '' || quoted || record.length > 0)) endRecord();
  return records;
}

/**
 * The separator that splits the first records into the same number of fields, more than one:
 * a comma inside text makes a ragged split, a real separator an even one. Among even splits the
 * one with most columns wins; with none, the most columns on average. `fallback` (a comma, or a
 * tab for .tsv) is for text with no separator at all.
 */
export function detectSeparator(text: string, fallback: Separator = ','): Separator {
  let best: { separator: Separator; consistent: boolean; columns: number } | null = null;
  for (const separator of SEPARATORS) {
    const sample = parseDelimited(text, separator, SAMPLE_RECORDS);
    if (sample.length === 0) continue;
    const counts = sample.map((record) => record.length);
    const columns = counts.reduce((sum, count) => sum + count, 0) / counts.length;
    if (columns <= 1) continue;
    const consistent = counts.every((count) => count === counts[0]);
    const better =
      best === null ||
      (consistent && !best.consistent) ||
      (consistent === best.consistent && columns > best.columns);
    if (better) best = { separator, consistent, columns };
  }
  return best?.separator ?? fallback;
}

/** Whether a file opens as a table: by its name, as the server types both as plain text. */
export function isDelimitedName(name: string): boolean {
  return /\.(csv|tsv)$/i.test(name);
}

/** The separator to assume when the text itself gives none. */
export function fallbackSeparator(name: string): Separator {
  return /\.tsv$/i.test(name) ? '\t' : ',';
}
