/**
 * Options of command-line tools as the runner's rules name them: short letters anywhere in a
 * cluster (`-r`, `-rn`), GNU long options with getopt's abbreviations (`--rec` is `--recursive`),
 * and whole words (find's expression, grep's `--directories=recurse`).
 */
export interface OptionSet {
  letters?: string;
  long?: readonly string[];
  words?: RegExp;
}

/**
 * The option of `set` that `word` gives, as the user wrote it, or undefined. Every letter of a
 * cluster counts, also one that is really the argument of an earlier option (`-eR`): a false
 * match is cheap, a missed option is not.
 */
export function optionIn(word: string, set: OptionSet): string | undefined {
  if (set.words?.test(word)) return word;
  if (word.startsWith('--')) {
    const given = word.slice(2).split('=')[0] as string;
    if (given === '') return undefined;
    const hit = set.long?.find((option) => option.startsWith(given));
    return hit === undefined ? undefined : `--${hit}`;
  }
  if (word.startsWith('-') && set.letters) {
    const letter = [...word.slice(1)].find((c) => set.letters!.includes(c));
    return letter === undefined ? undefined : `-${letter}`;
  }
  return undefined;
}

/** What `find` says of a tool; GNU tools installed beside BSD ones carry a `g` prefix (gcp, gfind). */
export function toolEntry<T>(name: string, find: (n: string) => T | undefined): T | undefined {
  return find(name) ?? (name.startsWith('g') ? find(name.slice(1)) : undefined);
}
