import fc from 'fast-check';
import { describe, it } from 'vitest';
import { knownExtensions, mimeByExtension } from '../src/files/listing/mime.js';
import {
  compileNameFilter,
  prepareNameFilter,
  type NameFilterSpec,
} from '../src/files/listing/name-filter.js';
import { parseQuery } from '../src/files/search/search.js';
import { runs, timeLimit } from './fuzz-runs.js';

/*
 * Fuzzing the search query (contract 7): any text parses without throwing into
 * a filter that behaves the same on the main thread and on the reader threads; the words, phrases,
 * `type:` and `case:` conditions come out as written; names are matched case-folded unless asked.
 */

const count = runs();

function same<T>(actual: T, expected: T, what: string): void {
  if (actual !== expected) throw new Error(`${what}: got ${String(actual)}, want ${String(expected)}`);
}

function sameJson(actual: unknown, expected: unknown, what: string): void {
  same(JSON.stringify(actual), JSON.stringify(expected), what);
}

/** The filter as the reader threads build it: from the function's source text alone. */
const threadCompile = new Function(`return (${compileNameFilter.toString()});`)() as typeof compileNameFilter;

const EXTENSIONS = knownExtensions();
const TOKENS = [
  'type:',
  'type:image',
  'type:music',
  'type:video',
  'type:audio',
  'type:pdf',
  'type:',
  'case:sensitive',
  'case:insensitive',
  'case:',
  '"',
  ' ',
  '  ',
  '\t',
  '.',
  ':',
  'İ',
  'ß',
  'Σ',
  '\u0301',
  '\0',
  '\\',
];
const queryText = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .array(fc.oneof(fc.constantFrom(...TOKENS), fc.string({ maxLength: 4 })), { maxLength: 10 })
    .map((a) => a.join('')),
);
const fileName = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 16 }),
  fc
    .tuple(fc.stringMatching(/^[a-zA-Z0-9 _-]{0,8}$/), fc.constantFrom(...EXTENSIONS), fc.boolean())
    .map(([base, ext, upper]) => base + (upper ? ext.toUpperCase() : ext)),
);

describe('fuzz: the search query parser', () => {
  it(
    `parses any text, and its filter decides alike on every thread (${count} queries)`,
    () => {
      fc.assert(
        fc.property(queryText, fc.array(fileName, { minLength: 1, maxLength: 8 }), (query, names) => {
          const spec = parseQuery(query);
          same(typeof spec.caseSensitive, 'boolean', 'caseSensitive');
          for (const term of spec.terms) {
            same(typeof term, 'string', 'term');
            if (!spec.caseSensitive) same(term, term.toLowerCase(), 'a term of a case-insensitive query');
          }
          const prepared = prepareNameFilter(spec);
          const crossed = JSON.parse(prepared.json) as NameFilterSpec;
          sameJson(crossed, spec, 'the spec after crossing threads');
          const onThread = threadCompile(crossed);
          for (const name of names) {
            const kept = prepared.keep(name);
            same(typeof kept, 'boolean', name);
            same(
              onThread(name),
              kept,
              `thread decision for ${JSON.stringify(name)} in ${JSON.stringify(query)}`,
            );
          }
        }),
        { numRuns: count },
      );
    },
    timeLimit(count, 1),
  );

  const word = fc.stringMatching(/^[a-zA-Z0-9\u00e9\u00c9._-]{1,8}$/);
  const typeWord = fc.oneof(
    fc.constantFrom('image', 'music', 'audio', 'video', 'pdf', 'TXT'),
    fc.stringMatching(/^\w{1,6}$/),
  );
  const MEDIA: Record<string, string> = { image: 'image', audio: 'audio', music: 'audio', video: 'video' };

  it(
    `gives back the words, phrase, types and case flag it was written with (${count} queries)`,
    () => {
      fc.assert(
        fc.property(
          fc.array(word, { minLength: 1, maxLength: 4 }),
          fc.array(typeWord, { maxLength: 3 }),
          fc.constantFrom('sensitive', 'insensitive', undefined),
          fc.boolean(),
          fc.boolean(),
          (words, types, caseFlag, quoted, typesLast) => {
            const text = quoted ? `"${words.join(' ')}"` : words.join(' ');
            const conditions = [...(caseFlag ? [`case:${caseFlag}`] : []), ...types.map((t) => `type:${t}`)];
            const query = (typesLast ? [text, ...conditions] : [...conditions, text]).join(' ');
            const spec = parseQuery(query);
            const sensitive = caseFlag === 'sensitive';
            same(spec.caseSensitive, sensitive, query);
            const fold = (s: string) => (sensitive ? s : s.toLowerCase());
            sameJson(spec.terms, quoted ? [fold(words.join(' '))] : words.map(fold), query);
            // Media types list their extensions (what those mean is checked below), others a suffix.
            sameJson(
              spec.types.map((t) => ('suffix' in t ? t : t.extensions.length > 0 ? 'media' : 'none')),
              types.map((t) => (MEDIA[t] ? 'media' : { suffix: '.' + t })),
              query,
            );
          },
        ),
        { numRuns: count },
      );
    },
    timeLimit(count, 1),
  );

  it(
    `keeps by type exactly what the listing calls that type, and folds case unless asked (${count} names)`,
    () => {
      const typed = fc.constantFrom('image', 'music', 'audio', 'video');
      fc.assert(
        fc.property(typed, fileName, word, fileName, (type, name, w, other) => {
          const byType = prepareNameFilter(parseQuery(`type:${type}`)).keep;
          const media = MEDIA[type]!;
          same(
            byType(name),
            mimeByExtension(name).startsWith(media),
            `type:${type} on ${JSON.stringify(name)}`,
          );

          const hay = `${other}${w}${name}`;
          const insensitive = prepareNameFilter(parseQuery(w.toUpperCase())).keep;
          same(insensitive(hay), true, `${w.toUpperCase()} in ${JSON.stringify(hay)}`);
          same(
            insensitive(name),
            name.toLowerCase().includes(w.toUpperCase().toLowerCase()),
            `${w} in ${JSON.stringify(name)}`,
          );
          const sensitive = prepareNameFilter(parseQuery(`case:sensitive ${w}`)).keep;
          same(sensitive(hay), true, `case:sensitive ${w} in ${JSON.stringify(hay)}`);
          same(sensitive(name), name.includes(w), `case:sensitive ${w} in ${JSON.stringify(name)}`);
        }),
        { numRuns: count },
      );
    },
    timeLimit(count, 1),
  );
});
