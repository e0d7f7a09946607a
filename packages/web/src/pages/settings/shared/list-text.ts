/** "ls  cat" → ["ls", "cat"]; empty text is an empty list. */
export function splitWords(text: string): string[] {
  return text.split(/\s+/).filter(Boolean);
}

/** One entry per non-empty line, trimmed. */
export function splitLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}
