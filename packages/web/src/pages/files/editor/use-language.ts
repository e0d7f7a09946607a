import { LanguageDescription } from '@codemirror/language';
import { languages } from '@codemirror/language-data';
import type { Extension } from '@codemirror/state';
import { useEffect, useState } from 'react';

/** The language a file name asks for (by extension or by name, e.g. Dockerfile), if any is known. */
export function languageFor(fileName: string): LanguageDescription | null {
  return LanguageDescription.matchFilename(languages, fileName);
}

/**
 * Syntax highlighting for a file: each language is its own chunk, loaded when a file needs it.
 * Until then (and for unknown types) the text is plain.
 */
export function useLanguage(fileName: string): Extension[] {
  const [loaded, setLoaded] = useState<{ fileName: string; support: Extension } | null>(null);

  useEffect(() => {
    const description = languageFor(fileName);
    if (!description) return;
    let active = true;
    description.load().then(
      (support) => active && setLoaded({ fileName, support }),
      // A chunk that fails to load leaves the text plain: still fully editable.
      () => undefined,
    );
    return () => {
      active = false;
    };
  }, [fileName]);

  return loaded && loaded.fileName === fileName ? [loaded.support] : [];
}
