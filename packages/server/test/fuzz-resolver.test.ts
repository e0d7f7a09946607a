import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError, fromSystemError } from '../src/errors.js';
import { openPinCount, openPinnedFile, useAnchoringForTests } from '../src/files/access/anchor.js';
import { isInside } from '../src/files/access/resolver.js';
import { testAccess, type TestAccess } from './files-helpers.js';
import { runs, timeLimit } from './fuzz-runs.js';

/*
 * Fuzzing the one path resolver through the file access every request gets.
 * A real tree with every kind of link is built once; random request paths are resolved by the real
 * code and by a model of the same tree held in memory, and the two must agree: the same refusal,
 * or the same real path with the same content. Independently of the model, nothing outside the
 * scope is ever returned or read, no error but the domain's escapes, and no descriptor is left open.
 */

const NFC = 'Caf\u00e9';
const NFD = 'Cafe\u0301';
const LONGEST = 'L'.repeat(255);
const TOO_LONG = 'L'.repeat(256);
/** Linux resolves at most 40 links per path; the resolver allows more (see MAX_HOPS) and so does the model. */
const MAX_HOPS = 255;
/** Stands for the name of the temporary folder in generated paths (known only once it is made). */
const TMP_NAME = '<tmp>';

type Node = { type: 'dir' } | { type: 'file'; content: string } | { type: 'link'; target: string };

let tmp: string;
let scopeReal: string;
let t: TestAccess;
/** The model: every object under `tmp` by real path, and the folders above `tmp` (only partly known). */
const model = new Map<string, Node>();
const ancestors = new Set<string>();

/** The tree below `tmp`: relative path → content (a string), a folder ({}), or a link (`-> target`). */
function layout(tmpDir: string, scope: string): Record<string, string | object> {
  return {
    'outside/secret.txt': 'SECRET',
    'outside/dir/deep.txt': 'SECRET-DEEP',
    'outside/back': `-> ${scope}/a/f.txt`,
    'outside/back-rel': '-> ../served/mine/a',
    'served/other/x.txt': 'SECRET-OTHER',
    'served/mine/a/f.txt': 'A-F',
    'served/mine/a/b/c/deep.txt': 'ABC',
    'served/mine/a/b/c/up': '-> ../../..',
    'served/mine/a/b/c/top': '-> ../../../..',
    'served/mine/a/self': '-> .',
    'served/mine/a/parent': '-> ..',
    'served/mine/a/b/back': '-> ../../a',
    'served/mine/empty': {},
    [`served/mine/${NFC}/n.txt`]: 'NFC',
    [`served/mine/${NFD}/d.txt`]: 'NFD',
    [`served/mine/${LONGEST}`]: 'LONG',
    'served/mine/%2e%2e': 'PERCENT',
    'served/mine/in-rel': '-> a/b',
    'served/mine/in-file': '-> a/f.txt',
    'served/mine/in-abs': `-> ${scope}/a`,
    'served/mine/in-abs-dots': `-> ${scope}/a/b/../f.txt`,
    'served/mine/in-abs-scope': `-> ${scope}`,
    'served/mine/in-dotdot': '-> a/b/../../a/f.txt',
    'served/mine/in-nfd': `-> ${NFD}`,
    'served/mine/out-rel': '-> ../../outside',
    'served/mine/out-file': '-> ../../outside/secret.txt',
    'served/mine/out-abs': `-> ${tmpDir}/outside/secret.txt`,
    'served/mine/out-sibling': '-> ../other',
    'served/mine/out-dotdot': '-> a/../../other/x.txt',
    'served/mine/out-via-scope': `-> ${scope}/../other/x.txt`,
    'served/mine/out-and-back': '-> ../../outside/back-rel',
    'served/mine/out-and-back-abs': '-> ../../outside/back',
    'served/mine/slash': '-> /',
    'served/mine/tmp-abs': `-> ${tmpDir}`,
    'served/mine/scope-by-other-way': `-> ${tmpDir}/served/other/../mine`,
    'served/mine/dangling-in': '-> a/missing.txt',
    'served/mine/dangling-out': '-> ../../outside/missing.txt',
    'served/mine/dangling-dots': '-> nope/../../../outside/secret.txt',
    'served/mine/through-file': '-> a/f.txt/x',
    'served/mine/loop1': '-> loop2',
    'served/mine/loop2': '-> loop1',
    'served/mine/selfie': '-> selfie',
    'served/mine/chain': '-> in-rel',
    'served/mine/chain2': '-> chain/c',
    'served/mine/chain-out': '-> chain2/top',
  };
}

beforeAll(async () => {
  tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'fb-fuzz-resolver-')));
  scopeReal = path.join(tmp, 'served', 'mine');
  for (let p = path.dirname(tmp); ; p = path.dirname(p)) {
    ancestors.add(p);
    if (p === '/') break;
  }
  model.set(tmp, { type: 'dir' });
  for (const [rel, what] of Object.entries(layout(tmp, scopeReal))) {
    const full = path.join(tmp, rel);
    for (let d = path.dirname(full); d !== tmp; d = path.dirname(d)) {
      model.set(d, { type: 'dir' });
      await fsp.mkdir(d, { recursive: true });
    }
    if (typeof what === 'object') {
      model.set(full, { type: 'dir' });
      await fsp.mkdir(full, { recursive: true });
    } else if (what.startsWith('-> ')) {
      model.set(full, { type: 'link', target: what.slice(3) });
      await fsp.symlink(what.slice(3), full);
    } else {
      model.set(full, { type: 'file', content: what });
      await fsp.writeFile(full, what);
    }
  }
  t = await testAccess(path.join(tmp, 'served'), { scope: '/mine' });
});

afterAll(async () => {
  await t?.close();
  await fsp.rm(tmp, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------
// The model: the resolver's contract, written over the map above with plain strings.

type Outcome =
  | { refused: 400 | 403 }
  | { nameTooLong: true }
  /** The walk reached a folder the model does not know (above the tree): only safety is checked. */
  | { unknown: true }
  | { real: string; node?: Node };

class Refused {
  constructor(readonly outcome: Outcome) {}
}

const nonDot = (s: string) => s !== '' && s !== '.';
const join = (dir: string, name: string) => (dir === '/' ? '/' + name : dir + '/' + name);

function lookup(dir: string, name: string): Node | undefined {
  if (Buffer.byteLength(name) > 255) throw new Refused({ nameTooLong: true });
  const full = join(dir, name);
  const node = model.get(full);
  if (node) return node;
  if (ancestors.has(dir)) {
    if (ancestors.has(full) || full === tmp) return { type: 'dir' };
    throw new Refused({ unknown: true });
  }
  return undefined;
}

/** Where a walk is: the folders it went down through (the last is where it is). */
class ModelWalk {
  stack = [scopeReal];
  hops = 0;

  get top(): string {
    return this.stack.at(-1)!;
  }

  up(): void {
    if (this.stack.length > 1) this.stack.pop();
    else if (this.top !== '/') this.stack[0] = path.dirname(this.top);
  }

  target(linkPath: string): string[] {
    if (++this.hops > MAX_HOPS) throw new Refused({ refused: 403 });
    const node = model.get(linkPath) as { target: string };
    const segments = node.target.split('/').filter(nonDot);
    if (!node.target.startsWith('/')) return segments;
    const own = scopeReal.split('/').filter(nonDot);
    if (own.every((s, i) => segments[i] === s)) {
      this.stack = [scopeReal];
      return segments.slice(own.length);
    }
    this.stack = ['/'];
    return segments;
  }

  folders(segments: string[]): { missing: string[]; blocked: boolean } {
    const queue = segments.filter(nonDot);
    while (queue.length > 0) {
      const seg = queue.shift()!;
      if (seg === '..') {
        this.up();
        continue;
      }
      const node = lookup(this.top, seg);
      if (!node) return { missing: [seg, ...queue], blocked: false };
      if (node.type === 'dir') this.stack.push(join(this.top, seg));
      else if (node.type === 'link') queue.unshift(...this.target(join(this.top, seg)));
      else return { missing: [seg, ...queue], blocked: true };
    }
    return { missing: [], blocked: false };
  }
}

/** The deepest existing folder and what lies below it, as the resolver reports it. */
interface Final {
  folder?: string;
  real: string;
  node?: Node;
}

function missingBelow(w: ModelWalk, missing: string[]): Final {
  return { folder: w.top, real: path.posix.resolve(w.top, ...missing) };
}

function follow(w: ModelWalk, folder: string, name: string): Final {
  let here = folder;
  let leaf = name;
  for (;;) {
    const segments = w.target(join(here, leaf));
    const last = segments.at(-1);
    if (last === undefined || last === '..') {
      const walked = w.folders(segments);
      if (walked.missing.length > 0) return missingBelow(w, walked.missing);
      const below = w.stack.length > 1 ? w.stack.at(-2) : undefined;
      return { ...(below && { folder: below }), real: w.top, node: { type: 'dir' } };
    }
    const walked = w.folders(segments.slice(0, -1));
    if (walked.missing.length > 0) return missingBelow(w, [...walked.missing, last]);
    here = w.top;
    leaf = last;
    const node = lookup(here, leaf);
    if (!node) return { folder: here, real: join(here, leaf) };
    if (node.type !== 'link') return { folder: here, real: join(here, leaf), node };
  }
}

function modelResolve(request: string, followFinal: boolean): Outcome {
  if (request.includes('\0') || request.includes('\\')) return { refused: 400 };
  const segments = request.split('/').filter(nonDot);
  if (segments.includes('..')) return { refused: 400 };
  const name = segments.at(-1);
  if (name === undefined) return { real: scopeReal, node: { type: 'dir' } };
  const w = new ModelWalk();
  let fin: Final;
  try {
    const up = w.folders(segments.slice(0, -1));
    if (up.missing.length > 0) fin = missingBelow(w, [...up.missing, name]);
    else {
      const folder = w.top;
      const node = lookup(folder, name);
      if (node?.type !== 'link' || !followFinal)
        fin = { folder, real: join(folder, name), ...(node && { node }) };
      else fin = follow(w, folder, name);
    }
  } catch (err) {
    if (err instanceof Refused) return err.outcome;
    throw err;
  }
  const holder = fin.folder ?? fin.real;
  if (!isInside(scopeReal, fin.real) || !isInside(scopeReal, holder)) return { refused: 403 };
  return { real: fin.real, ...(fin.node && { node: fin.node }) };
}

// ---------------------------------------------------------------------------------------------

const segment = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      'a',
      'b',
      'c',
      'f.txt',
      'deep.txt',
      'up',
      'top',
      'self',
      'parent',
      'back',
      'empty',
    ),
  },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      ...Object.keys(layout('/T', '/S'))
        .filter((k) => k.startsWith('served/mine/'))
        .map((k) => k.split('/')[2]!),
    ),
  },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '..',
      '.',
      '',
      'missing',
      'n.txt',
      'd.txt',
      NFC,
      NFD,
      'outside',
      'served',
      'mine',
      'other',
      'x.txt',
      'secret.txt',
      'dir',
      'tmp',
      TMP_NAME,
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '%2e%2e',
      '%2F',
      '.%2e',
      '\u2025',
      '\uff0e\uff0e',
      'a\0',
      '\0',
      'a\\..',
      '..\\..',
      LONGEST,
      TOO_LONG,
      '\u00e9'.repeat(128),
      'x'.repeat(1000),
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
);

/** Paths that lead somewhere, through links and back: random tails are added to them. */
const KNOWN = [
  'a/f.txt',
  'a/b/c/deep.txt',
  'in-rel/c/deep.txt',
  'in-rel/c/up/a/f.txt',
  'chain2/deep.txt',
  'chain2/up/in-file',
  'in-abs/b/c/top/other/x.txt',
  'in-abs/b/c/top/mine/empty',
  'in-abs-scope/a/b',
  'out-rel/secret.txt',
  'out-rel/dir/deep.txt',
  'out-rel/back',
  'out-rel/back-rel/f.txt',
  `tmp-abs/served/mine/a/f.txt`,
  'tmp-abs/outside/secret.txt',
  `slash/tmp/${TMP_NAME}/served/mine/a/f.txt`,
  `slash/tmp/${TMP_NAME}/outside/secret.txt`,
  'out-and-back/b/c/deep.txt',
  'out-and-back-abs',
  'a/self/self/f.txt',
  'a/parent/a/f.txt',
  'a/b/back/b/c/up/in-file',
  'in-nfd/d.txt',
  `${NFC}/n.txt`,
  'out-sibling/x.txt',
  'a/b/c/top/mine/a/f.txt',
  'a/b/c/top/other/x.txt',
  'scope-by-other-way/a/f.txt',
  'through-file/y',
  'dangling-dots',
  'chain-out/mine/in-file',
];

const separator = fc.constantFrom('/', '/', '/', '//', '/./');

const randomSegments = fc.array(segment, { maxLength: 6 });
const knownSegments = fc
  .tuple(
    fc.constantFrom(...KNOWN),
    fc.nat(),
    fc.oneof(
      { weight: 2, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(segment, { minLength: 1, maxLength: 2 }) },
    ),
  )
  .map(([known, cut, tail]) => {
    const segs = known.split('/');
    // Sometimes stop part way (a folder or a link on the way), then maybe wander on.
    return [...segs.slice(0, segs.length - (cut % 3 === 0 ? cut % segs.length : 0)), ...tail];
  });

const requestPath = fc
  .tuple(
    fc.constantFrom('', '/', '//'),
    fc.oneof({ weight: 1, arbitrary: randomSegments }, { weight: 2, arbitrary: knownSegments }),
    fc.array(separator, { minLength: 12, maxLength: 12 }),
    fc.boolean(),
  )
  .map(([lead, segs, seps, trail]) => {
    const body = segs.map((s, i) => (i === 0 ? s : seps[i % seps.length]! + s)).join('');
    return lead + body + (trail ? '/' : '');
  });

function isDomainError(err: unknown): err is AppError {
  return err instanceof AppError;
}

async function checkOne(generated: string, followFinal: boolean): Promise<void> {
  const request = generated.replaceAll(TMP_NAME, path.basename(tmp));
  const pinsBefore = openPinCount();
  const expected = modelResolve(request, followFinal);
  let opened;
  try {
    opened = await t.access.open(request, { followFinal });
  } catch (err) {
    if (!isDomainError(err)) {
      // A name longer than the system allows is the kernel's to refuse; the one error mapping turns it into 400.
      expect(expected, `${JSON.stringify(request)} threw ${String(err)}`).toEqual({ nameTooLong: true });
      expect(fromSystemError(err)?.status).toBe(400);
    } else if ('refused' in expected) {
      expect(err.status, JSON.stringify(request)).toBe(expected.refused);
    } else {
      expect(
        'unknown' in expected,
        `${JSON.stringify(request)} refused (${err.status}), model: ${JSON.stringify(expected)}`,
      ).toBe(true);
      expect([403, 404]).toContain(err.status);
    }
    expect(openPinCount()).toBe(pinsBefore);
    return;
  }
  try {
    // Whatever the model says, nothing outside the scope is ever handed out.
    expect(isInside(scopeReal, opened.real), opened.real).toBe(true);
    if (opened.folder) expect(isInside(scopeReal, opened.folder.real)).toBe(true);
    let content: string | undefined;
    if (opened.node && opened.stat?.isFile()) {
      const fh = await openPinnedFile(opened.node);
      content = await fh.readFile('utf8');
      await fh.close();
      expect(content).not.toContain('SECRET');
    }
    if ('unknown' in expected) return;
    expect(expected, `${JSON.stringify(request)} resolved to ${opened.real}`).toHaveProperty('real');
    const want = expected as { real: string; node?: Node };
    expect(opened.real, JSON.stringify(request)).toBe(want.real);
    const kind = opened.stat?.isDirectory()
      ? 'dir'
      : opened.stat?.isFile()
        ? 'file'
        : opened.stat?.isSymbolicLink()
          ? 'link'
          : undefined;
    expect(kind, JSON.stringify(request)).toBe(want.node?.type);
    if (want.node?.type === 'file') expect(content).toBe(want.node.content);
  } finally {
    await opened.close();
    expect(openPinCount()).toBe(pinsBefore);
  }
}

describe('fuzz: the resolver against a model of a real tree with links', () => {
  it('the model knows the tree (every name it expects is where it says)', async () => {
    await checkOne('/a/f.txt', true);
    await checkOne('/in-dotdot', true);
    await checkOne('/out-file', true);
    await checkOne('/loop1/x', true);
    await checkOne(`/${NFD}/d.txt`, true);
    expect(modelResolve('/out-and-back-abs', true)).toEqual({
      real: path.join(scopeReal, 'a/f.txt'),
      node: { type: 'file', content: 'A-F' },
    });
    expect(modelResolve('/scope-by-other-way', true)).toEqual({ refused: 403 });
    expect(modelResolve('/slash/etc/passwd', true)).toEqual({ unknown: true });
  });

  const count = runs();
  it(
    `agrees with the model and never leaves the scope (${count} request paths)`,
    async () => {
      await fc.assert(
        fc.asyncProperty(requestPath, fc.boolean(), (request, followFinal) => checkOne(request, followFinal)),
        { numRuns: count },
      );
    },
    timeLimit(count, 3),
  );

  const fallbackCount = Math.ceil(count / 10);
  it(
    `agrees with the model when folders are named by path, not held by descriptor (${fallbackCount} paths)`,
    async () => {
      const restore = useAnchoringForTests(false);
      try {
        await fc.assert(
          fc.asyncProperty(requestPath, fc.boolean(), (request, followFinal) =>
            checkOne(request, followFinal),
          ),
          { numRuns: fallbackCount },
        );
      } finally {
        restore();
      }
    },
    timeLimit(fallbackCount, 3),
  );
});
