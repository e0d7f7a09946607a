// Lists, for each locale, the keys of the English catalogue it lacks and the plural forms its
// language needs that it lacks (or all locales when none is named):
// `node scripts/i18n-missing.mjs [code ...]`. Translators fill these; the locale test fails while
// any remain.
import fs from 'node:fs';
import path from 'node:path';

const dir = path.resolve(import.meta.dirname, '../packages/web/src/i18n/locales');
const read = (code) => JSON.parse(fs.readFileSync(path.join(dir, `${code}.json`), 'utf8'));
const flatten = (node, prefix = '') =>
  Object.entries(node).flatMap(([key, value]) =>
    typeof value === 'string' ? [[prefix + key, value]] : flatten(value, `${prefix}${key}.`),
  );

const english = flatten(read('en'));
const wanted = process.argv.slice(2);
const codes = wanted.length
  ? wanted
  : fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json') && f !== 'en.json')
      .map((f) => f.slice(0, -5));
let missingAny = false;
for (const code of codes) {
  const have = fs.existsSync(path.join(dir, `${code}.json`))
    ? new Set(flatten(read(code)).map(([k]) => k))
    : new Set();
  const lacking = english.filter(([key]) => !have.has(key));
  // i18next picks the suffix Intl.PluralRules names for a count, so Czech also needs "_few" and
  // "_many", Latvian "_zero": forms English lacks, reported with the English "_other" text.
  const forms = new Intl.PluralRules(code).resolvedOptions().pluralCategories;
  for (const [key, value] of english) {
    if (!key.endsWith('_other')) continue;
    const base = key.slice(0, -'other'.length);
    for (const form of forms) {
      const wanted = base + form;
      if (!have.has(wanted) && !lacking.some(([k]) => k === wanted)) lacking.push([wanted, value]);
    }
  }
  if (!lacking.length) continue;
  missingAny = true;
  console.log(`# ${code}: ${lacking.length} missing`);
  for (const [key, value] of lacking) console.log(`${key}\t${JSON.stringify(value)}`);
}
process.exitCode = missingAny ? 1 : 0;
