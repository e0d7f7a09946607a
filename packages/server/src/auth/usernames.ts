import { badRequest } from '../errors.js';

/**
 * What makes a username acceptable, and when two usernames are the same person. One rule for
 * every way an account is named: the users API, the CLI, signup and proxy sign-in.
 */

export const MAX_USERNAME_LENGTH = 255;

/**
 * The identity of a username: two names with the same key are one account (login with `ADMIN`
 * finds `admin`). NFKC folds full-width letters, ligatures and other compatibility forms.
 */
export function usernameKey(username: string): string {
  return username.normalize('NFKC').toLowerCase().normalize('NFKC');
}

// Characters a reader cannot see or that reorder what is shown: controls, format characters
// (zero-width, bidi controls, soft hyphen), default-ignorables (Hangul fillers, variation
// selectors), line separators, unassigned and private-use code points, and the blank braille cell.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800]/u;

// Path separators would make a name that cannot be a home folder.
const SEPARATORS = /[/\\]/;

/**
 * Scripts a name may be written in. A letter in none of them and not shared by all scripts
 * (digits, punctuation, combining marks) counts as one "other" script.
 */
const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Syriac',
  'Thaana',
  'Nko',
  'Devanagari',
  'Bengali',
  'Gurmukhi',
  'Gujarati',
  'Oriya',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Sinhala',
  'Thai',
  'Lao',
  'Tibetan',
  'Myanmar',
  'Khmer',
  'Mongolian',
  'Ethiopic',
  'Cherokee',
  'Canadian_Aboriginal',
  'Tifinagh',
  'Han',
  'Hiragana',
  'Katakana',
  'Bopomofo',
  'Hangul',
  'Yi',
  'Coptic',
  'Runic',
  'Ogham',
] as const;
const SCRIPT_RES = SCRIPTS.map((s) => [s, new RegExp(`\\p{Script_Extensions=${s}}`, 'u')] as const);
const SHARED_SCRIPT = /[\p{Script=Common}\p{Script=Inherited}]/u;

/**
 * Writing systems that mix scripts by nature (UTS #39, "highly restrictive"): Han with kana is
 * Japanese, Han with Hangul Korean, Han with Bopomofo Chinese; each may also be mixed with Latin.
 */
const SCRIPT_FAMILIES: Record<string, string[]> = {
  Han: ['Japanese', 'Korean', 'Chinese'],
  Hiragana: ['Japanese'],
  Katakana: ['Japanese'],
  Hangul: ['Korean'],
  Bopomofo: ['Chinese'],
};
const FAMILIES = new Set(['Japanese', 'Korean', 'Chinese']);

/** The scripts a character may belong to; undefined for characters every script shares. */
function scriptsOf(char: string): Set<string> | undefined {
  const found = new Set<string>();
  for (const [name, re] of SCRIPT_RES) {
    if (re.test(char)) {
      found.add(name);
      for (const family of SCRIPT_FAMILIES[name] ?? []) found.add(family);
    }
  }
  if (found.size > 0) return found;
  return SHARED_SCRIPT.test(char) ? undefined : new Set(['Other']);
}

function intersect(sets: Set<string>[]): Set<string> {
  const [first, ...rest] = sets;
  if (!first) return new Set(['Common']);
  return new Set([...first].filter((s) => rest.every((r) => r.has(s))));
}

/** The scripts a name mixes (empty when it is written in one script or an accepted family). */
export function mixedScripts(name: string): string[] {
  const sets = [...name].map(scriptsOf).filter((s): s is Set<string> => s !== undefined);
  if (intersect(sets).size > 0) return [];
  const nonLatin = sets.filter((s) => !s.has('Latin'));
  if ([...intersect(nonLatin)].some((s) => FAMILIES.has(s))) return [];
  const named = new Set(sets.map((s) => [...s][0]!));
  return [...named].map((s) => s.replaceAll('_', ' '));
}

/**
 * Single characters that look like a Latin letter or digit in common fonts, mapped to the
 * Latin form they imitate (a subset of Unicode's confusables.txt: the letters that can spell
 * a Latin-looking name in one script, plus Latin's own look-alikes such as the dotless i).
 */
const LOOK_ALIKES = new Map<string, string>(
  [
    // Latin's own: dotless i and j, small capitals, and the digits and bar read as letters.
    'ıi ȷj ɑa ɡg ɩi ǀl ĸk ʏy ɪi ʟl Il 1l |l 0o',
    // Cyrillic
    'аa вb еe һh іi јj кk мm нh оo рp сc тt уy хx ѕs ԁd ԛq ԝw ӏl үy',
    'Аa Вb Еe З3 Іl Јj Кk Мm Нh Оo Рp Сc Ѕs Тt Хx Уy Үy Ԛq Ԝw Ӏl',
    // Greek
    'αa ιi κk νv οo ρp τt υu χx γy Αa Βb Εe Ζz Ηh Ιl Κk Μm Νn Οo Ρp Τt Υy Χx',
    // Armenian
    'օo սu ոn հh ցg զq Օo Սu',
  ]
    .join(' ')
    .split(' ')
    .map((pair) => [pair.slice(0, -1), pair.slice(-1)] as const),
);

/**
 * What a name looks like: two names with the same skeleton are hard to tell apart on screen
 * (after UTS #39's skeleton, with a smaller table and case folded afterwards).
 */
export function usernameSkeleton(username: string): string {
  const mapped = [...username.normalize('NFKC').normalize('NFD')]
    .map((c) => LOOK_ALIKES.get(c) ?? c)
    .join('');
  return mapped.toLowerCase().normalize('NFD');
}

function codePoint(char: string): string {
  return `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Another account, as far as naming goes. */
export interface NamedAccount {
  id: number;
  username: string;
}

/**
 * Checks a username for a new or renamed account and answers it as stored (NFC). Throws a 400
 * naming the problem. `others` are the existing accounts (the renamed one excluded): a name that
 * only looks like one of them is refused here; a name with the same key is left to the caller,
 * which answers 409 as for any duplicate.
 */
export function checkUsername(username: string | undefined, others: Iterable<NamedAccount>): string {
  const name = (username ?? '').normalize('NFC');
  if (!name.trim()) throw badRequest('username is required');
  if (name.length > MAX_USERNAME_LENGTH) throw badRequest('username is too long');
  const invisible = INVISIBLE.exec(name);
  if (invisible) {
    throw badRequest(
      `username contains an invisible or control character (${codePoint(invisible[0])}), which is not allowed`,
    );
  }
  if (SEPARATORS.test(name)) throw badRequest('username contains characters that are not allowed (/ or \\)');
  if (name !== name.trim()) throw badRequest('username must not begin or end with a space');
  const folded = name.normalize('NFKC');
  if (folded !== name) {
    throw badRequest(
      `username contains compatibility characters (such as full-width letters or ligatures): write it as "${folded}"`,
    );
  }
  const scripts = mixedScripts(name);
  if (scripts.length > 0) {
    throw badRequest(`username mixes scripts (${scripts.join(', ')}), which can imitate another name`);
  }
  const key = usernameKey(name);
  const skeleton = usernameSkeleton(name);
  for (const other of others) {
    if (usernameKey(other.username) === key) continue;
    if (usernameSkeleton(other.username) === skeleton) {
      throw badRequest('username looks too much like an existing username');
    }
  }
  return name;
}
