import { CliError } from './io.js';

/**
 * The range `rm <i> [j]` names in a list of `count` items, checked (File Browser panicked on
 * an index out of range). Inclusive, as File Browser's was.
 */
export function indexRange(
  first: string,
  last: string | undefined,
  count: number,
  what: string,
): [number, number] {
  const parse = (text: string) => {
    if (!/^\d+$/.test(text)) throw new CliError(`"${text}" is not an index: expected a whole number`);
    const n = Number(text);
    if (n >= count) {
      throw new CliError(
        count === 0
          ? `there are no ${what} to remove`
          : `index ${n} is out of range: the ${what} are numbered 0 to ${count - 1}`,
      );
    }
    return n;
  };
  const i = parse(first);
  const j = last === undefined ? i : parse(last);
  if (j < i) throw new CliError(`the end index ${j} is before the start index ${i}`);
  return [i, j];
}
