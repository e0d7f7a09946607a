import path from 'node:path';
import { isInside } from '../files/access/resolver.js';
import { hostSystemLayout } from './executable.js';
import { optionIn } from './option-words.js';

/**
 * The system's programs the runner runs: tools that read and write the files they are named and
 * run nothing else. A distribution installs hundreds of programs besides, and any of them may run
 * code it is given (`pydoc3`, `msgexec`, `dpkg-architecture -c`, `sensible-editor`, a compiler
 * under its triplet name): a deny list of those is never complete, so the list is of what runs.
 * Their options that run commands or write past the checks are refused apart (deny-list.ts,
 * path-options.ts, command.ts).
 */
export const SIMPLE_TOOLS: ReadonlySet<string> = new Set([
  // Looking at files and folders.
  ...['ls', 'dir', 'vdir', 'tree', 'stat', 'file', 'du', 'df', 'pwd', 'realpath', 'readlink'],
  ...['basename', 'dirname', 'cat', 'tac', 'head', 'tail', 'wc', 'nl', 'od', 'hexdump', 'xxd'],
  ...['grep', 'egrep', 'fgrep', 'rg', 'find', 'cmp', 'diff', 'diff3', 'sdiff', 'comm'],
  // Checksums and encodings.
  ...['md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum', 'sha512sum', 'b2sum'],
  ...['cksum', 'sum', 'base32', 'base64', 'basenc', 'iconv'],
  // Text.
  ...['sort', 'uniq', 'cut', 'tr', 'paste', 'join', 'fold', 'fmt', 'column', 'rev', 'expand'],
  ...['unexpand', 'pr', 'ptx', 'tsort', 'split', 'csplit', 'shuf', 'numfmt', 'tee'],
  // Changing files.
  ...['cp', 'mv', 'rm', 'mkdir', 'rmdir', 'touch', 'ln', 'link', 'unlink', 'install', 'chmod'],
  ...['truncate', 'fallocate', 'dd', 'shred', 'sync'],
  // Compression of single files.
  ...['gzip', 'gunzip', 'zcat', 'bzip2', 'bunzip2', 'bzcat', 'xz', 'unxz', 'xzcat', 'lzma'],
  ...['unlzma', 'zstd', 'unzstd', 'zstdcat', 'lz4', 'brotli'],
  // Answers of their own.
  ...['echo', 'printf', 'cal', 'seq', 'expr', 'factor', 'true', 'false', 'yes', 'sleep'],
  ...['id', 'whoami', 'groups', 'uname', 'nproc', 'test', '['],
]);

/** Tools that set a file's mode from their arguments. */
const MODE_SETTERS = new Set(['chmod', 'install', 'mkdir']);

/**
 * Whether a mode, symbolic or octal, sets the setuid or setgid bit: an octal mode (`4755`), a
 * symbolic clause adding `s` (`u+s`, `g=rws`), or an operator before octal digits, which GNU's
 * tools read as octal too (`=4755`, `+4000`, `u=rwx,+2000`).
 */
function setsIdBits(mode: string): boolean {
  const idBits = (octal: string) => (parseInt(octal, 8) & 0o6000) !== 0;
  if (/^[0-7]+$/.test(mode)) return idBits(mode);
  return mode.split(',').some((clause) => {
    if (!/^[ugoa]*[-+=]/.test(clause)) return false;
    if (/[+=][^-+=]*s/.test(clause)) return true;
    return [...clause.matchAll(/[+=]([0-7]+)/g)].some((m) => idBits(m[1]!));
  });
}

/**
 * Every way a word may carry a mode, as getopt reads it: the word, what follows an `=`, and each
 * tail of a short-option cluster (`-Dm4755`, `-pm4755`: a mode may start after any letter). A
 * mode given as the next word (`--mode 4755`, `-m 4755`) is a word of its own.
 */
function modeForms(word: string): string[] {
  const forms = [word];
  const eq = word.indexOf('=');
  if (word.startsWith('--') && eq > 0) forms.push(word.slice(eq + 1));
  if (word.startsWith('-') && !word.startsWith('--')) {
    for (let k = 1; k < word.length; k++) forms.push(word.slice(k));
  }
  return forms;
}

/**
 * Why a mode in `args` would make a setuid or setgid file, or undefined: a program a user
 * uploaded, made setuid for the server's user (root, often), would run with its rights for
 * anyone on the host who can reach it, whatever the sandbox. Every form a mode can take is
 * looked at (a false refusal is cheap, a missed mode is not), and chmod's `--reference`, which
 * copies another file's mode, is refused outright.
 */
export function setIdMode(names: readonly string[], args: readonly string[]): string | undefined {
  const name = names.find((n) => MODE_SETTERS.has(n));
  if (name === undefined) return undefined;
  for (const arg of args) {
    if (name === 'chmod' && optionIn(arg, { long: ['reference'] }) && arg.length > 4) {
      return `chmod ${arg} copies the mode of another file, setuid or setgid bits included`;
    }
    if (modeForms(arg).some((form) => form !== '' && setsIdBits(form))) {
      return `${name} ${arg} would make a setuid or setgid file`;
    }
  }
  return undefined;
}

/**
 * Why a program is not run, or undefined: one found in the host's system folders must be one of
 * the simple tools (by the name typed, and by its real name), unless an administrator named it in
 * `unsafeCommands`. A program an administrator put in an `--execPath` folder of their own is
 * their choice, as a hook's program is.
 */
export function unknownSystemProgram(name: string, real: string): string | undefined {
  const system = hostSystemLayout().some((e) => !e.link && isInside(e.path, real));
  if (!system) return undefined;
  if (SIMPLE_TOOLS.has(name) && SIMPLE_TOOLS.has(path.basename(real))) return undefined;
  return `${name} is not one of the simple tools the runner runs from the system's folders (ls, cat, grep, cp, mv, gzip, sort, …)`;
}
