/**
 * Splits a command line into words the way a POSIX shell quotes them, and does nothing else: no
 * globbing, no variables, no command substitution, no pipes, redirection or command separators.
 * `;`, `|`, `&`, `>`, `<`, `*`, `?`, `$`, `` ` ``, `(`, `)`, `{`, `}` and `~` are ordinary characters
 * that end up inside words, so `echo a;touch x` is `echo` with the two arguments `a;touch` and `x`.
 */

/** Why a line cannot be split; its message is shown to the user as is. */
export class CommandLineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CommandLineError';
  }
}

export interface Word {
  text: string;
  /**
   * Some of the word was single-quoted or backslash-escaped: a shell would not expand a `$` in it,
   * so hooks do not substitute their variables in such a word (`'$FILE'` stays `$FILE`).
   */
  verbatim: boolean;
}

const BLANK = new Set([' ', '\t', '\n', '\r']);
/** Inside double quotes a backslash escapes only these (POSIX); before anything else it is literal. */
const DQ_ESCAPABLE = new Set(['"', '\\', '$', '`']);

/** Splits `line` into words with their quoting facts. Throws CommandLineError on unbalanced quotes. */
export function splitWords(line: string): Word[] {
  if (line.includes('\0')) throw new CommandLineError('the command line contains a NUL character');
  const words: Word[] = [];
  let text = '';
  let verbatim = false;
  let inWord = false;
  let i = 0;
  const end = () => {
    if (inWord) words.push({ text, verbatim });
    text = '';
    verbatim = false;
    inWord = false;
  };
  while (i < line.length) {
    const ch = line[i] as string;
    if (BLANK.has(ch)) {
      end();
      i++;
      continue;
    }
    inWord = true;
    if (ch === "'") {
      const close = line.indexOf("'", i + 1);
      if (close < 0) throw new CommandLineError('unterminated single quote');
      text += line.slice(i + 1, close);
      verbatim = true;
      i = close + 1;
    } else if (ch === '"') {
      i++;
      for (;;) {
        if (i >= line.length) throw new CommandLineError('unterminated double quote');
        const c = line[i] as string;
        if (c === '"') {
          i++;
          break;
        }
        if (c === '\\' && i + 1 < line.length) {
          const next = line[i + 1] as string;
          if (next === '\n') {
            i += 2; // line continuation
            continue;
          }
          if (DQ_ESCAPABLE.has(next)) {
            text += next;
            verbatim = true;
            i += 2;
            continue;
          }
        }
        text += c;
        i++;
      }
    } else if (ch === '\\') {
      if (i + 1 >= line.length) throw new CommandLineError('the command line ends with a lone backslash');
      const next = line[i + 1] as string;
      if (next !== '\n') {
        text += next;
        verbatim = true;
      } else if (text === '' && !verbatim) {
        inWord = false; // a line continuation between words is only a separator
      }
      i += 2;
    } else {
      text += ch;
      i++;
    }
  }
  end();
  return words;
}

/** The words of a command line as plain strings. */
export function splitCommandLine(line: string): string[] {
  return splitWords(line).map((w) => w.text);
}
