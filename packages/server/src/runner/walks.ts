import { optionIn, toolEntry, type OptionSet } from './option-words.js';

/**
 * Commands that walk folders, or name the files they write: what a walk enters and what such a
 * tool creates are not among the arguments the runner checks.
 * In the sandbox (runner/sandbox.ts) the server's private paths are empty where a walk looks;
 * without one, a walk of a folder holding them (File Browser's default layout puts the database
 * in the served folder) would read the database, the trash, staged uploads and the preview
 * cache, so there the runner refuses these commands whenever the user's scope holds a private
 * path. The list is the tools and options known to walk; the sandbox is the guarantee, this is
 * the best a server without one can do.
 *
 * Like path-options.ts this is part of the scope confinement: `unsafeCommands` does not lift it.
 */

/** The options that make a tool walk (grep's `-r`, `--recursive`, `-d recurse`). */
interface WalkRule extends OptionSet {
  /** The tool walks whatever folder it is given, whatever its options. */
  always?: true;
}

const ALWAYS: WalkRule = { always: true };
const GREP: WalkRule = {
  letters: 'rR',
  long: ['recursive', 'dereference-recursive'],
  words: /^(?:recurse|-[^-]*drecurse|--d[a-z]*=recurse)$/,
};
const RECURSIVE_R: WalkRule = { letters: 'R', long: ['recursive'] };
const RECURSIVE_RR: WalkRule = { letters: 'rR', long: ['recursive'] };

const RULES: Readonly<Record<string, WalkRule>> = {
  // Walk whatever they are given.
  find: ALWAYS,
  du: ALWAYS,
  tree: ALWAYS,
  rgrep: ALWAYS,
  rg: ALWAYS,
  ag: ALWAYS,
  ack: ALWAYS,
  ugrep: ALWAYS,
  sift: ALWAYS,
  ncdu: ALWAYS,
  gdu: ALWAYS,
  dust: ALWAYS,
  tar: ALWAYS,
  bsdtar: ALWAYS,
  pax: ALWAYS,
  '7z': ALWAYS,
  '7za': ALWAYS,
  '7zr': ALWAYS,
  '7zz': ALWAYS,
  rclone: ALWAYS,
  rdfind: ALWAYS,
  rmlint: ALWAYS,
  updatedb: ALWAYS,
  // Walk with an option.
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  zgrep: GREP,
  ls: { letters: 'R', long: ['recursive'] },
  dir: { letters: 'R', long: ['recursive'] },
  vdir: { letters: 'R', long: ['recursive'] },
  exa: { letters: 'RT', long: ['recurse', 'tree'] },
  eza: { letters: 'RT', long: ['recurse', 'tree'] },
  lsd: { letters: 'R', long: ['recursive', 'tree'] },
  cp: { letters: 'rRa', long: ['recursive', 'archive'] },
  scp: { letters: 'r' },
  rsync: { letters: 'ra', long: ['recursive', 'archive'] },
  zip: { letters: 'rR', long: ['recurse-paths', 'recurse-patterns'] },
  rm: RECURSIVE_RR,
  diff: { letters: 'r', long: ['recursive'] },
  chmod: RECURSIVE_R,
  chown: RECURSIVE_R,
  chgrp: RECURSIVE_R,
  chcon: RECURSIVE_R,
  chattr: RECURSIVE_R,
  lsattr: RECURSIVE_R,
  setfacl: RECURSIVE_R,
  getfacl: RECURSIVE_R,
  getfattr: RECURSIVE_R,
  restorecon: RECURSIVE_RR,
  fdupes: RECURSIVE_RR,
  jdupes: RECURSIVE_RR,
  md5deep: { letters: 'r' },
  sha1deep: { letters: 'r' },
  sha256deep: { letters: 'r' },
  hashdeep: { letters: 'r' },
  gzip: { letters: 'r', long: ['recursive'] },
  gunzip: { letters: 'r', long: ['recursive'] },
  zcat: { letters: 'r', long: ['recursive'] },
  pigz: { letters: 'r', long: ['recursive'] },
  unpigz: { letters: 'r', long: ['recursive'] },
  zstd: { letters: 'r' },
  lz4: { letters: 'r' },
};

/**
 * Tools that make the names of the files they write (`split`'s prefix + `al`, `gzip -S l`,
 * `gunzip x.gz` writing `x`, an archive's members): without a sandbox, such a name could be one
 * of the server's files (a `-journal` the database would roll into itself at the next start,
 * its live `-wal`), which no argument names.
 */
const NAME_MAKERS = new Set([
  'split',
  'csplit',
  'gzip',
  'gunzip',
  'pigz',
  'unpigz',
  'xz',
  'unxz',
  'lzma',
  'unlzma',
  'bzip2',
  'bunzip2',
  'pbzip2',
  'zstd',
  'unzstd',
  'zstdmt',
  'lz4',
  'unlz4',
  'lzip',
  'lzop',
  'compress',
  'uncompress',
  'brotli',
  'cpio',
  'unzip',
  'bsdunzip',
  'unrar',
  'unar',
  'uudecode',
  'patch',
]);

/**
 * How the program `names` (the name typed and the real name of the program) would reach files its
 * arguments do not name with `args` ("du walks folders", "grep -r walks folders", "split names
 * the files it writes itself"), or undefined when it would not. Words after `--` count too.
 */
export function walkOf(names: readonly string[], args: readonly string[]): string | undefined {
  for (const name of new Set(names)) {
    const rule = toolEntry(name, (n) => RULES[n]);
    if (rule?.always) return `${name} walks folders`;
    for (const arg of rule ? args : []) {
      const option = optionIn(arg, rule!);
      if (option !== undefined) return `${name} ${option} walks folders`;
    }
    if (toolEntry(name, (n) => (NAME_MAKERS.has(n) ? n : undefined))) {
      return `${name} names the files it writes itself`;
    }
  }
  return undefined;
}
