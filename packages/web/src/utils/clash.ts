/**
 * The top-level name an entry takes in its destination: the name itself, or for an entry of a
 * dropped folder ("photos/2024/a.jpg") the folder's name.
 */
export function topLevelName(relativePath: string): string {
  return relativePath.replace(/^\/+/, '').split('/')[0] ?? '';
}

/**
 * The names among `incoming` that already exist in the destination (exact, case-sensitive, as
 * the server compares them), each once, in the order given.
 */
export function clashingNames(
  incoming: readonly string[],
  destination: readonly { name: string }[],
): string[] {
  const existing = new Set(destination.map((item) => item.name));
  const seen = new Set<string>();
  const clashes: string[] = [];
  for (const name of incoming.map(topLevelName)) {
    if (name && existing.has(name) && !seen.has(name)) {
      seen.add(name);
      clashes.push(name);
    }
  }
  return clashes;
}
