/**
 * A search query's conditions on a name (contract 7), as plain data: the same filter runs on the
 * main thread and on the reader threads that walk folders for a search, so it crosses threads
 * as JSON and is compiled on each side.
 */
export interface NameFilterSpec {
  caseSensitive: boolean;
  /** A name must contain one of these (lower-cased unless case-sensitive) when there are any. */
  terms: string[];
  /**
   * `type:` conditions; a name must satisfy one of them when there are any: end with `suffix`, or
   * have an extension (exact case, else lower case) in `extensions`.
   */
  types: ({ suffix: string } | { extensions: string[] })[];
}

/** The filter as a function of a name (also on the reader threads, dir-reader-worker.ts). */
export function compileNameFilter(spec: NameFilterSpec): (name: string) => boolean {
  const types = spec.types.map((t) =>
    'suffix' in t
      ? (name: string) => name.endsWith(t.suffix)
      : ((set: Set<string>) => (name: string) => {
          const dot = name.lastIndexOf('.');
          if (dot === -1) return false;
          const ext = name.slice(dot);
          return set.has(ext) || set.has(ext.toLowerCase());
        })(new Set(t.extensions)),
  );
  const terms = spec.terms;
  const caseSensitive = spec.caseSensitive;
  return (name) => {
    if (types.length > 0 && !types.some((t) => t(name))) return false;
    if (terms.length === 0) return true;
    const haystack = caseSensitive ? name : name.toLowerCase();
    return terms.some((t) => haystack.includes(t));
  };
}

/** A filter ready for both sides: the function for this thread, the JSON for reader threads. */
export interface PreparedNameFilter {
  json: string;
  keep: (name: string) => boolean;
}

export function prepareNameFilter(spec: NameFilterSpec): PreparedNameFilter {
  return { json: JSON.stringify(spec), keep: compileNameFilter(spec) };
}
