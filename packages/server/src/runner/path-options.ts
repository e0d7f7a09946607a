import { optionIn, toolEntry, type OptionSet } from './option-words.js';

/**
 * Options that make a tool reach files its arguments do not name: by creating a symbolic link
 * (whose target is resolved from the link's own folder, not from the working folder where the
 * runner checked it), by following links met while walking a folder (the runner checks the
 * arguments, not what a walk finds), or by reading the names of files to open from a file.
 *
 * Unlike the options of deny-list.ts these are part of the scope confinement, not of the
 * "runs other commands" rule: `unsafeCommands` does not lift them.
 */

/** The options refused (find's expression and leading options are words, not clusters). */
interface PathOptionRule extends OptionSet {
  /** Ends "… is refused because it …". */
  why: string;
}

const CREATES_LINKS = 'creates symbolic links';
const FOLLOWS_LINKS = 'follows symbolic links while walking folders';
const NAMES_FROM_FILE = 'reads the names of the files to open from a file, which the runner cannot check';

const GREP: PathOptionRule[] = [{ letters: 'R', long: ['dereference-recursive'], why: FOLLOWS_LINKS }];
// gzip -r -f (and zcat -r -f) read through links met in the walk.
const RECURSIVE_COMPRESSOR: PathOptionRule[] = [{ letters: 'r', long: ['recursive'], why: FOLLOWS_LINKS }];
const LS: PathOptionRule[] = [{ letters: 'L', long: ['dereference'], why: FOLLOWS_LINKS }];
const CHANGES_MODE: PathOptionRule[] = [{ letters: 'LH', long: ['dereference'], why: FOLLOWS_LINKS }];
const CHECKSUM: PathOptionRule[] = [{ letters: 'c', long: ['check'], why: NAMES_FROM_FILE }];
const FILES0: PathOptionRule = { long: ['files0-from'], why: NAMES_FROM_FILE };
const XZ: PathOptionRule[] = [{ long: ['files', 'files0'], why: NAMES_FROM_FILE }];
const ZSTD: PathOptionRule[] = [
  { letters: 'r', long: ['recursive'], why: FOLLOWS_LINKS },
  { long: ['filelist'], why: NAMES_FROM_FILE },
];

const RULES: Readonly<Record<string, readonly PathOptionRule[]>> = {
  ln: [{ letters: 's', long: ['symbolic'], why: CREATES_LINKS }],
  // BSD install -l s links instead of copying (GNU install has no -l).
  install: [{ letters: 'l', why: CREATES_LINKS }],
  cp: [
    { letters: 's', long: ['symbolic-link'], why: CREATES_LINKS },
    { letters: 'LH', long: ['dereference'], why: FOLLOWS_LINKS },
    // `cp --parents ../../x d` writes d/../../x, and through any link standing at d/a of d/a/b.
    {
      long: ['parents'],
      why: 'writes into folders named after its sources, which the runner does not check',
    },
  ],
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  rgrep: GREP,
  zgrep: GREP,
  ugrep: [{ letters: 'RS', long: ['dereference-recursive', 'dereference-files'], why: FOLLOWS_LINKS }],
  rg: [{ letters: 'L', long: ['follow'], why: FOLLOWS_LINKS }],
  ag: [{ letters: 'f', long: ['follow'], why: FOLLOWS_LINKS }],
  ack: [{ long: ['follow'], why: FOLLOWS_LINKS }],
  find: [
    // GNU find takes -H/-L only as whole words; BSD find also in clusters (`-sL`).
    { words: /^-(?:follow|[EHLPXdsx]*[HL][EHLPXdsx]*)$/, why: FOLLOWS_LINKS },
    { words: /^-files0-from$/, why: NAMES_FROM_FILE },
  ],
  du: [{ letters: 'L', long: ['dereference'], why: FOLLOWS_LINKS }, FILES0],
  ls: LS,
  dir: LS,
  vdir: LS,
  // tree's -L is a depth; -l follows links to folders.
  tree: [{ letters: 'l', why: FOLLOWS_LINKS }],
  chmod: CHANGES_MODE,
  chown: CHANGES_MODE,
  chgrp: CHANGES_MODE,
  gzip: RECURSIVE_COMPRESSOR,
  gunzip: RECURSIVE_COMPRESSOR,
  zcat: RECURSIVE_COMPRESSOR,
  pigz: RECURSIVE_COMPRESSOR,
  unpigz: RECURSIVE_COMPRESSOR,
  zstd: ZSTD,
  zstdmt: ZSTD,
  unzstd: ZSTD,
  zstdcat: ZSTD,
  lz4: RECURSIVE_COMPRESSOR,
  lz4c: RECURSIVE_COMPRESSOR,
  lz4cat: RECURSIVE_COMPRESSOR,
  unlz4: RECURSIVE_COMPRESSOR,
  lzip: RECURSIVE_COMPRESSOR,
  xz: XZ,
  unxz: XZ,
  xzcat: XZ,
  lzma: XZ,
  unlzma: XZ,
  lzcat: XZ,
  wc: [FILES0],
  sort: [FILES0],
  file: [{ letters: 'f', long: ['files-from'], why: NAMES_FROM_FILE }],
  md5sum: CHECKSUM,
  sha1sum: CHECKSUM,
  sha224sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha384sum: CHECKSUM,
  sha512sum: CHECKSUM,
  b2sum: CHECKSUM,
  cksum: CHECKSUM,
};

function rulesOf(name: string): readonly PathOptionRule[] {
  return toolEntry(name, (n) => RULES[n]) ?? [];
}

/**
 * Why one of `args` makes the program `names` (the name typed and the real name of the program)
 * reach files the runner did not check, or undefined. Words after `--` are looked at too: a
 * false refusal is cheap, a missed option is not, and not every tool honours `--`.
 */
export function deniedPathOption(names: readonly string[], args: readonly string[]): string | undefined {
  for (const name of new Set(names)) {
    for (const rule of rulesOf(name)) {
      for (const arg of args) {
        const option = optionIn(arg, rule);
        if (option !== undefined) return `${name} ${option} ${rule.why}`;
      }
    }
  }
  return undefined;
}

/**
 * Tools that name what they write by appending to an argument: `split … PREFIX` makes PREFIXaa,
 * `csplit -f PREFIX -b SUFFIX` makes PREFIX + SUFFIX, a backup (`mv -b -S SUFFIX`, also cp, ln,
 * install) renames the destination to destination + SUFFIX, and `gunzip -S SUFFIX` names its
 * output by cutting the suffix off. A suffix may not go into folders, and where a name is built
 * from an argument, each path argument is checked as the start of a name too
 * (`checkArgumentPaths`' `prefixes`): the scope folder without its `/` names its siblings.
 */
const SUFFIXES: Readonly<Record<string, OptionSet>> = {
  split: { long: ['additional-suffix'] },
  csplit: { letters: 'b', long: ['suffix-format'] },
  ...Object.fromEntries(
    ['mv', 'cp', 'ln', 'install'].map((tool) => [tool, { letters: 'S', long: ['suffix'] }] as const),
  ),
  ...Object.fromEntries(
    ['gzip', 'gunzip', 'zcat', 'pigz', 'unpigz', 'xz', 'unxz', 'xzcat', 'lzma', 'unlzma', 'lzcat'].map(
      (tool) => [tool, { letters: 'S', long: ['suffix'] }] as const,
    ),
  ),
};

/** Tools that always build names from an argument (split's and csplit's pieces). */
const PREFIX_NAMERS = new Set(['split', 'csplit']);
/** A backup, which renames the destination to a name built from it (`-b`, `--backup`, `-S`). */
const BACKUP: OptionSet = { letters: 'bS', long: ['backup', 'suffix'] };

/** Whether the program, given `args`, builds names by appending to its path arguments. */
export function namesByPrefix(names: readonly string[], args: readonly string[] = []): boolean {
  return names.some((n) =>
    toolEntry(n, (m) =>
      PREFIX_NAMERS.has(m) ||
      (['mv', 'cp', 'ln', 'install'].includes(m) && args.some((a) => optionIn(a, BACKUP) !== undefined))
        ? true
        : undefined,
    ),
  );
}

/** Why a suffix in `args` would put what the program writes into other folders, or undefined. */
export function deniedSuffix(names: readonly string[], args: readonly string[]): string | undefined {
  for (const name of new Set(names)) {
    const set = toolEntry(name, (n) => SUFFIXES[n]);
    if (!set) continue;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i]!;
      const option = optionIn(arg, set);
      if (option === undefined) continue;
      // The value: after `=`, after the option's letter in a cluster, or the next word.
      const attached = arg.startsWith('--')
        ? arg.includes('=')
          ? arg.slice(arg.indexOf('=') + 1)
          : ''
        : arg.slice(arg.indexOf(option.slice(1)) + 1);
      const value = attached !== '' ? attached : (args[i + 1] ?? '');
      if (value.includes('/'))
        return `${name} ${option} with a "/" writes into folders the runner does not check`;
    }
  }
  return undefined;
}
