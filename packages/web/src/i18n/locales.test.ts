import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOCALE_CODES } from './locales';

const LOCALES_DIR = path.join(import.meta.dirname, 'locales');

// The old File Browser client's 33 languages (its pt-pt is our pt, its sv is our sv-se).
const EXPECTED = [
  'ar',
  'bg',
  'ca',
  'cs',
  'de',
  'el',
  'en',
  'es',
  'fa',
  'fr',
  'he',
  'hr',
  'hu',
  'is',
  'it',
  'ja',
  'ko',
  'lv',
  'nl',
  'nl-be',
  'no',
  'pl',
  'pt-br',
  'pt',
  'ro',
  'ru',
  'sk',
  'sv-se',
  'tr',
  'uk',
  'vi',
  'zh-cn',
  'zh-tw',
];

type Catalogue = { [key: string]: string | Catalogue };

function flattenEntries(catalogue: Catalogue, prefix = ''): [string, string][] {
  return Object.entries(catalogue).flatMap(([key, value]): [string, string][] =>
    typeof value === 'string' ? [[`${prefix}${key}`, value]] : flattenEntries(value, `${prefix}${key}.`),
  );
}

function flattenKeys(catalogue: Catalogue): string[] {
  return flattenEntries(catalogue).map(([key]) => key);
}

function readCatalogue(code: string): Catalogue {
  return JSON.parse(fs.readFileSync(path.join(LOCALES_DIR, `${code}.json`), 'utf8')) as Catalogue;
}

const present = fs
  .readdirSync(LOCALES_DIR)
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.slice(0, -'.json'.length));

describe('locale files', () => {
  it('the app offers exactly the 33 supported languages', () => {
    expect([...LOCALE_CODES].sort()).toEqual([...EXPECTED].sort());
  });

  it('are exactly the 33 supported languages', () => {
    const missing = EXPECTED.filter((code) => !present.includes(code));
    const unexpected = present.filter((code) => !EXPECTED.includes(code));
    const problems = [
      missing.length ? `missing locale files: ${missing.map((code) => `${code}.json`).join(', ')}` : '',
      unexpected.length
        ? `unexpected locale files: ${unexpected.map((code) => `${code}.json`).join(', ')}`
        : '',
    ].filter(Boolean);
    expect(problems, problems.join('; ')).toEqual([]);
  });

  it('have every key the English catalogue has', () => {
    const english = new Set(flattenKeys(readCatalogue('en')));
    const gaps = present
      .filter((code) => code !== 'en')
      .map((code) => {
        const keys = new Set(flattenKeys(readCatalogue(code)));
        const lacking = [...english].filter((key) => !keys.has(key));
        return lacking.length ? `${code}.json lacks ${lacking.length} key(s): ${lacking.join(', ')}` : '';
      })
      .filter(Boolean);
    expect(gaps, gaps.join('\n')).toEqual([]);
  });

  it('keep every value a non-empty string', () => {
    const empty = present.flatMap((code) => {
      const catalogue = readCatalogue(code);
      return flattenKeys(catalogue)
        .filter((key) => {
          const value = key
            .split('.')
            .reduce<Catalogue | string | undefined>(
              (node, part) => (typeof node === 'object' ? node[part] : undefined),
              catalogue,
            );
          return typeof value !== 'string' || value.trim() === '';
        })
        .map((key) => `${code}.json: ${key}`);
    });
    expect(empty, empty.join(', ')).toEqual([]);
  });

  it('are translated, not English copies', () => {
    // Some words are the same in many languages (OK, Admin, Regex, example paths), so a few
    // identical values are fine; a catalogue mostly equal to English was never translated.
    const english = new Map(flattenEntries(readCatalogue('en')));
    const copies = present
      .filter((code) => code !== 'en')
      .map((code) => {
        const same = flattenEntries(readCatalogue(code)).filter(([key, value]) => english.get(key) === value);
        return same.length > english.size * 0.1
          ? `${code}.json has ${same.length} of ${english.size} values identical to English`
          : '';
      })
      .filter(Boolean);
    expect(copies, copies.join('\n')).toEqual([]);
  });

  it('have every plural form their language needs', () => {
    // i18next picks the suffix Intl.PluralRules names for the count (Czech "few", Latvian "zero",
    // …); a form the catalogue lacks silently falls back to English.
    const pluralBases = flattenKeys(readCatalogue('en'))
      .filter((key) => key.endsWith('_other'))
      .map((key) => key.slice(0, -'_other'.length));
    const gaps = present.flatMap((code) => {
      const keys = new Set(flattenKeys(readCatalogue(code)));
      const forms = new Intl.PluralRules(code).resolvedOptions().pluralCategories;
      const lacking = pluralBases.flatMap((base) =>
        forms.map((form) => `${base}_${form}`).filter((key) => !keys.has(key)),
      );
      return lacking.length ? [`${code}.json lacks ${lacking.join(', ')}`] : [];
    });
    expect(gaps, gaps.join('\n')).toEqual([]);
  });

  it('hold no keys the English catalogue dropped (plural forms of its keys aside)', () => {
    const english = new Set(flattenKeys(readCatalogue('en')));
    const known = (key: string) => {
      const plural = /^(.*)_(zero|one|two|few|many|other)$/.exec(key);
      return english.has(key) || (plural !== null && english.has(`${plural[1]}_other`));
    };
    const stale = present
      .filter((code) => code !== 'en')
      .flatMap((code) =>
        flattenKeys(readCatalogue(code))
          .filter((key) => !known(key))
          .map((key) => `${code}.json: ${key}`),
      );
    expect(stale, stale.join(', ')).toEqual([]);
  });
});
