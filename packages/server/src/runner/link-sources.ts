import path from 'node:path';
import type { FileAccess } from '../files/access/access.js';
import { joinReal, readFolderTypes, type Pinned } from '../files/access/anchor.js';
import { joinVirtual } from '../files/access/resolver.js';
import { operandEntry } from './arguments.js';
import { CommandRefused } from './refusal.js';

/**
 * Operands that carry symbolic links somewhere else or read through them.
 *
 * A relative link is resolved from its own folder: copied or moved to another depth (`mv`,
 * `cp -a`, `cp -r`, `cp -P`), or hard-linked elsewhere (`ln`, `link`: a hard link to a link is a
 * new link), `../../x` names another file, possibly outside the scope. `cp -L`, plain `cp` of a
 * link and `diff` read through the links they meet. So the operands these programs take as
 * sources are walked, links not followed, and the command is refused when one is or holds a
 * link. `cp` writes through a link standing where it copies to (`cp f dir/` when `dir/f` is a
 * link), so the places it would write are looked at too.
 */

/** Entries looked at per command line; a bigger tree is refused rather than half checked. */
export const MAX_WALKED_ENTRIES = 10_000;

interface OperandSyntax {
  /** Short options that take an argument (the rest of the cluster, or the next word). */
  shortWithArgument: string;
  /** Long options that require an argument (`--suffix=x` or `--suffix x`). */
  longWithArgument: readonly string[];
  /** The last operand is the destination, unless a target-directory option names it. */
  destination: boolean;
  /** Where the destination's existing entries would be written through (cp). */
  writesIntoDestination: boolean;
  /** Long options whose `=value` is one more source (diff --from-file=dir). */
  longSources?: readonly string[];
  /** Sources are renamed, so whatever they hold goes along (mv). */
  movesSources?: boolean;
}

const COPY_LIKE = { shortWithArgument: 'St', longWithArgument: ['suffix', 'target-directory'] };

const SYNTAX: Readonly<Record<string, OperandSyntax>> = {
  cp: {
    ...COPY_LIKE,
    longWithArgument: [...COPY_LIKE.longWithArgument, 'sparse', 'no-preserve'],
    destination: true,
    writesIntoDestination: true,
  },
  mv: { ...COPY_LIKE, destination: true, writesIntoDestination: false, movesSources: true },
  // install unlinks what is at the destination before it writes: nothing is written through.
  install: {
    shortWithArgument: 'gmoSt',
    longWithArgument: ['group', 'mode', 'owner', 'suffix', 'target-directory'],
    destination: true,
    writesIntoDestination: false,
  },
  ln: { ...COPY_LIKE, destination: true, writesIntoDestination: false },
  link: { shortWithArgument: '', longWithArgument: [], destination: true, writesIntoDestination: false },
  // diff follows links in the folders it compares, on both sides.
  diff: {
    shortWithArgument: 'CDFILSUWXx',
    longWithArgument: [],
    destination: false,
    writesIntoDestination: false,
    longSources: ['from-file', 'to-file'],
  },
};

function syntaxOf(name: string): OperandSyntax | undefined {
  return SYNTAX[name] ?? (name.startsWith('g') ? SYNTAX[name.slice(1)] : undefined);
}

interface Operands {
  sources: string[];
  destination?: string;
}

/**
 * Splits arguments as getopt would. A word taken for an option's argument that is really an
 * operand would escape the walk, so only the options listed take one; any other word not starting
 * with `-` counts as a source, which at worst walks something extra.
 */
function operandsOf(args: readonly string[], syntax: OperandSyntax): Operands {
  const operands: string[] = [];
  let target: string | undefined;
  let options = true;
  for (let i = 0; i < args.length; i++) {
    const word = args[i] as string;
    if (!options || word === '-' || !word.startsWith('-')) {
      operands.push(word);
    } else if (word === '--') {
      options = false;
    } else if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const given = word.slice(2, eq < 0 ? undefined : eq);
      if (eq >= 0 && syntax.longSources?.some((o) => o.startsWith(given))) {
        operands.push(word.slice(eq + 1));
        continue;
      }
      const hit = syntax.longWithArgument.find((o) => o.startsWith(given));
      if (hit === undefined) continue;
      const value = eq < 0 ? args[++i] : word.slice(eq + 1);
      if (hit === 'target-directory') target = value;
    } else {
      for (let k = 1; k < word.length; k++) {
        const letter = word[k] as string;
        if (!syntax.shortWithArgument.includes(letter)) continue;
        const value = k + 1 < word.length ? word.slice(k + 1) : args[++i];
        if (letter === 't') target = value;
        break;
      }
    }
  }
  if (target !== undefined) return { sources: operands, destination: target };
  if (!syntax.destination || operands.length < 2) return { sources: operands };
  return { sources: operands.slice(0, -1), destination: operands.at(-1) };
}

/** The names below a source folder, as a tree (null for anything that is not a folder). */
type Tree = Map<string, Tree | null>;

class Walk {
  private seen = 0;
  /** Bytes of the regular files met in the sources (what a copy of them writes). */
  bytes = 0;

  constructor(
    private readonly command: string,
    private readonly access: FileAccess,
    private readonly moves: boolean,
  ) {}

  private count(): void {
    if (++this.seen > MAX_WALKED_ENTRIES) {
      throw new CommandRefused(
        `Command not allowed: ${this.command} would act on more than ${MAX_WALKED_ENTRIES} files, too many to check for symbolic links.`,
      );
    }
  }

  /** `inside`: the virtual path of the link found below the operand, when it is not the operand. */
  private refuseLink(operand: string, inside?: string): never {
    const where = inside === undefined ? '' : ` (${inside})`;
    throw new CommandRefused(
      `Command not allowed: ${JSON.stringify(operand)} is or holds a symbolic link${where}; ${this.command} would carry it elsewhere or read through it.`,
    );
  }

  /** The tree of the source `operand` (entry `virtual`), refused when a link is met. */
  async source(virtual: string, operand: string): Promise<Tree | null | undefined> {
    this.count();
    let o;
    try {
      o = await this.access.open(virtual, { followFinal: false, rules: false });
    } catch {
      return undefined; // outside or unreadable: the argument check or the program says so
    }
    try {
      if (o.isSymlink) this.refuseLink(operand);
      if (o.node?.stat.isFile()) this.bytes += o.node.stat.size;
      if (!o.node || !o.stat?.isDirectory()) return o.node ? null : undefined;
      return await this.folder(o.node, virtual, operand);
    } finally {
      await o.close();
    }
  }

  private async folder(folder: Pinned, virtual: string, operand: string): Promise<Tree> {
    const tree: Tree = new Map();
    // What cannot be read here cannot be read by the program either.
    const dirents = await readFolderTypes(folder).catch(() => []);
    for (const dirent of dirents) {
      this.count();
      const childVirtual = joinVirtual(virtual, dirent.name);
      const child = await folder.lookup(dirent.name).catch(() => undefined);
      if (!child) continue;
      try {
        if (child.stat.isSymbolicLink()) this.refuseLink(operand, childVirtual);
        if (this.access.isPrivate(child.real)) {
          // Renaming a folder takes the server's files in it along, wherever the command runs.
          if (this.moves) {
            throw new CommandRefused(
              `Command not allowed: ${JSON.stringify(operand)} holds the server's own files (${childVirtual}); ${this.command} would move them.`,
            );
          }
          // Commands see them empty (the sandbox) or may not walk them (runner/walks.ts).
          continue;
        }
        if (child.stat.isFile()) this.bytes += child.stat.size;
        tree.set(
          dirent.name,
          child.stat.isDirectory() ? await this.folder(child, childVirtual, operand) : null,
        );
      } finally {
        await child.close();
      }
    }
    return tree;
  }

  /** Refused when `name` in `folder` is one of the server's files: the command would write it. */
  notPrivate(folder: Pinned, name: string, virtual: string): void {
    if (this.access.isPrivate(joinReal(folder.real, name))) {
      throw new CommandRefused(
        `Command not allowed: ${this.command} would write ${joinVirtual(virtual, name)}, one of the server's own files.`,
      );
    }
  }

  /** Refused when a link stands at `name` in `folder`, or below it where `tree` would be copied. */
  async into(folder: Pinned, name: string, tree: Tree | null, virtual: string): Promise<void> {
    this.count();
    this.notPrivate(folder, name, virtual);
    const child = await folder.lookup(name).catch(() => undefined);
    if (!child) return;
    try {
      const childVirtual = joinVirtual(virtual, name);
      if (child.stat.isSymbolicLink()) {
        throw new CommandRefused(
          `Command not allowed: ${this.command} would write through the symbolic link ${childVirtual}.`,
        );
      }
      if (!tree || !child.stat.isDirectory()) return;
      for (const [sub, subTree] of tree) await this.into(child, sub, subTree, childVirtual);
    } finally {
      await child.close();
    }
  }
}

/**
 * Refuses (CommandRefused) `cp`, `mv`, `ln`, `link` and `diff` when a source operand is or holds a
 * symbolic link, `cp` when a link stands where it would write, any of them writing one of the
 * server's private paths into a folder, and `mv` of a folder holding one. `names` are the name typed and the real name of the program.
 * Answers the bytes of the regular files in the sources, private ones left out: what `cp` copies.
 */
export async function checkLinkOperands(
  access: FileAccess,
  cwdVirtual: string,
  names: readonly string[],
  args: readonly string[],
): Promise<number> {
  const name = names.find((n) => syntaxOf(n) !== undefined);
  if (name === undefined) return 0;
  const syntax = syntaxOf(name)!;
  const { sources, destination } = operandsOf(args, syntax);
  const walk = new Walk(name, access, syntax.movesSources === true);
  const trees: Array<{ base: string; tree: Tree | null }> = [];
  for (const operand of sources) {
    const virtual = await operandEntry(access, cwdVirtual, operand);
    if (virtual === undefined) continue;
    const tree = await walk.source(virtual, operand);
    if (tree !== undefined) trees.push({ base: path.posix.basename(virtual), tree });
  }
  if (destination === undefined || trees.length === 0) return walk.bytes;
  const dest = await operandEntry(access, cwdVirtual, destination);
  if (dest === undefined) return walk.bytes;
  let d;
  try {
    d = await access.open(dest, { rules: false });
  } catch {
    return walk.bytes;
  }
  try {
    if (!d.node || !d.stat?.isDirectory()) return walk.bytes;
    // Into a folder, each source lands under its own name there (`mv sub/x.db-journal .`).
    for (const { base } of trees) if (base !== '') walk.notPrivate(d.node, base, d.virtual);
    if (!syntax.writesIntoDestination) return walk.bytes;
    for (const { base, tree } of trees) {
      // `cp -r src dir` writes dir/src/…, `cp -rT src dir` writes dir/…: both are looked at.
      if (base !== '') await walk.into(d.node, base, tree, d.virtual);
      for (const [sub, subTree] of tree ?? []) await walk.into(d.node, sub, subTree, d.virtual);
    }
  } finally {
    await d.close();
  }
  return walk.bytes;
}
