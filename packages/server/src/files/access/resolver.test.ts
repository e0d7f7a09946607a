import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../errors.js';
import { openPinnedFile, openPinCount } from './anchor.js';
import { canonicalise, isInside, joinVirtual, Scope } from './resolver.js';

/*
 * A real tree in a temporary folder:
 *   <tmp>/outside/secret.txt            "SECRET"
 *   <tmp>/root/other/x.txt
 *   <tmp>/root/scope/a/b/file.txt        "inside"
 *   <tmp>/root/scope/...links below
 */
let tmp: string;
let root: string;
let scopeDir: string;
let outside: string;
let scope: Scope;

const LINKS: Record<string, string> = {
  'link-out': '../../outside',
  'link-out-file': '../../outside/secret.txt',
  'link-root': '..',
  'link-in': 'a/b',
  'link-in-file': 'a/b/file.txt',
  'dangling-out': '../../outside/missing.txt',
  'dangling-in': 'a/not-here.txt',
  chain1: 'chain2',
  chain2: 'chain3',
  chain3: '../other',
  loop1: 'loop2',
  loop2: 'loop1',
  'a/up': '../..',
  'a/self': '.',
  'a/b/back': '../../a',
};

async function expectStatus(p: Promise<unknown>, status: number): Promise<void> {
  await expect(p).rejects.toBeInstanceOf(AppError);
  await p.catch((err: AppError) => expect(err.status).toBe(status));
}

beforeAll(async () => {
  tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'fb-resolver-')));
  root = path.join(tmp, 'root');
  scopeDir = path.join(root, 'scope');
  outside = path.join(tmp, 'outside');
  await fsp.mkdir(path.join(scopeDir, 'a/b'), { recursive: true });
  await fsp.mkdir(path.join(root, 'other'), { recursive: true });
  await fsp.mkdir(outside, { recursive: true });
  await fsp.writeFile(path.join(outside, 'secret.txt'), 'SECRET');
  await fsp.writeFile(path.join(root, 'other/x.txt'), 'SECRET');
  await fsp.writeFile(path.join(scopeDir, 'a/b/file.txt'), 'inside');
  for (const [link, target] of Object.entries(LINKS)) await fsp.symlink(target, path.join(scopeDir, link));
  await fsp.symlink(path.join(outside, 'secret.txt'), path.join(scopeDir, 'link-abs'));
  await fsp.symlink(path.join(scopeDir, 'a'), path.join(scopeDir, 'link-abs-in'));
  scope = await Scope.open({ root, scope: '/scope', followExternalSymlinks: false });
});

afterAll(async () => {
  await fsp.rm(tmp, { recursive: true, force: true });
});

describe('canonicalise', () => {
  it('collapses empty and dot segments and keeps the trailing-slash flag', () => {
    expect(canonicalise('//a///b/./c/')).toEqual({
      virtual: '/a/b/c',
      segments: ['a', 'b', 'c'],
      trailingSlash: true,
    });
    expect(canonicalise('a/b')).toEqual({ virtual: '/a/b', segments: ['a', 'b'], trailingSlash: false });
    expect(canonicalise('/')).toEqual({ virtual: '/', segments: [], trailingSlash: true });
    expect(canonicalise('')).toEqual({ virtual: '/', segments: [], trailingSlash: true });
  });

  it('refuses NUL, backslashes and ".." segments with a message', () => {
    expect(() => canonicalise('/a\0b')).toThrow('the path contains a NUL character');
    expect(() => canonicalise('/a\\..\\b')).toThrow('the path contains a backslash');
    expect(() => canonicalise('/a/../b')).toThrow('the path contains a ".." segment');
    expect(() => canonicalise('/..')).toThrow(AppError);
  });

  it('keeps names that only look like dots', () => {
    expect(canonicalise('/%2e%2e/…/\u2025/．．').segments).toEqual(['%2e%2e', '…', '\u2025', '．．']);
    expect(canonicalise('/...').virtual).toBe('/...');
  });

  it('joins virtual paths', () => {
    expect(joinVirtual('/', 'a')).toBe('/a');
    expect(joinVirtual('/a/', '/b/')).toBe('/a/b');
    expect(joinVirtual('/a', '')).toBe('/a');
  });
});

describe('isInside', () => {
  it('compares on segment boundaries', () => {
    expect(isInside('/srv/a', '/srv/a')).toBe(true);
    expect(isInside('/srv/a', '/srv/a/b')).toBe(true);
    expect(isInside('/srv/a', '/srv/ab')).toBe(false);
    expect(isInside('/', '/x')).toBe(true);
  });
});

describe('Scope.resolve', () => {
  it('resolves plain paths inside the scope', async () => {
    const r = await scope.resolve('/a/b/file.txt');
    expect(r.real).toBe(path.join(scopeDir, 'a/b/file.txt'));
    expect(r.name).toBe('file.txt');
    expect(r.stat?.isFile()).toBe(true);
    expect(r.isSymlink).toBe(false);
    const rootR = await scope.resolve('/');
    expect(rootR.real).toBe(scopeDir);
    expect(rootR.name).toBe('');
  });

  it('resolves in-scope links, final and ancestor', async () => {
    const final = await scope.resolve('/link-in-file');
    expect(final.real).toBe(path.join(scopeDir, 'a/b/file.txt'));
    expect(final.entry).toBe(path.join(scopeDir, 'link-in-file'));
    expect(final.isSymlink).toBe(true);
    expect(final.linkStat?.isSymbolicLink()).toBe(true);
    expect((await scope.resolve('/link-in/file.txt')).real).toBe(path.join(scopeDir, 'a/b/file.txt'));
    expect((await scope.resolve('/link-abs-in/b/back/self/b')).real).toBe(path.join(scopeDir, 'a/b'));
  });

  it('refuses escaping links as the final component (relative and absolute)', async () => {
    await expectStatus(scope.resolve('/link-out'), 403);
    await expectStatus(scope.resolve('/link-out-file'), 403);
    await expectStatus(scope.resolve('/link-abs'), 403);
    await expectStatus(scope.resolve('/link-root'), 403);
    await expectStatus(scope.resolve('/chain1'), 403);
  });

  it('refuses escaping links as an ancestor', async () => {
    await expectStatus(scope.resolve('/link-out/secret.txt'), 403);
    await expectStatus(scope.resolve('/a/up/other/x.txt'), 403);
    await expectStatus(scope.resolve('/chain1/x.txt'), 403);
    // Out and back in: the real path is inside, which is all the kernel will touch.
    expect((await scope.resolve('/link-root/scope/a')).real).toBe(path.join(scopeDir, 'a'));
  });

  it('follows dangling links to where they would point', async () => {
    await expectStatus(scope.resolve('/dangling-out'), 403);
    const inside = await scope.resolve('/dangling-in');
    expect(inside.stat).toBeUndefined();
    expect(inside.isSymlink).toBe(true);
    expect(inside.real).toBe(path.join(scopeDir, 'a/not-here.txt'));
    // Creating through an escaping dangling link's folder is refused too.
    await expectStatus(scope.resolve('/link-out/new-file'), 403);
  });

  it('refuses symlink loops', async () => {
    await expectStatus(scope.resolve('/loop1'), 403);
  });

  it('does not follow the final link when asked (delete and move act on the link)', async () => {
    const r = await scope.resolve('/link-out', { followFinal: false });
    expect(r.real).toBe(path.join(scopeDir, 'link-out'));
    expect(r.isSymlink).toBe(true);
    // but an escaping ancestor is still refused
    await expectStatus(scope.resolve('/link-out/secret.txt', { followFinal: false }), 403);
  });

  it('reports missing paths with the place they would be created', async () => {
    const r = await scope.resolve('/new/dir/file.txt');
    expect(r.stat).toBeUndefined();
    expect(r.linkStat).toBeUndefined();
    expect(r.real).toBe(path.join(scopeDir, 'new/dir/file.txt'));
    const belowFile = await scope.resolve('/a/b/file.txt/x');
    expect(belowFile.stat).toBeUndefined();
  });

  it('allows everything lexical with followExternalSymlinks', async () => {
    const loose = await Scope.open({ root, scope: '/scope', followExternalSymlinks: true });
    const r = await loose.resolve('/link-out/secret.txt');
    expect(r.real).toBe(path.join(outside, 'secret.txt'));
    expect(() => canonicalise('/../x')).toThrow();
  });

  it('maps the scope like File Browser: "x", "./x" and "/x" are the same folder', async () => {
    for (const s of ['scope', './scope', '/scope', '/scope/', '/../scope']) {
      const other = await Scope.open({ root, scope: s, followExternalSymlinks: false });
      expect(other.real).toBe(scopeDir);
    }
    const whole = await Scope.open({ root, scope: '.', followExternalSymlinks: false });
    expect(whole.real).toBe(root);
    await expectStatus(Scope.open({ root, scope: '/missing', followExternalSymlinks: false }), 404);
  });

  it('refuses a scope folder that is a link out of the root', async () => {
    await fsp.symlink(outside, path.join(root, 'evil-home'));
    await expectStatus(Scope.open({ root, scope: '/evil-home', followExternalSymlinks: false }), 403);
  });

  it('maps real paths back to virtual paths', () => {
    expect(scope.virtualOf(scopeDir)).toBe('/');
    expect(scope.virtualOf(path.join(scopeDir, 'a/b'))).toBe('/a/b');
    expect(scope.virtualOf(path.join(root, 'scopex'))).toBeUndefined();
    expect(scope.virtualOf(outside)).toBeUndefined();
  });

  it('keeps open only what it returns, and lets go of it on close', async () => {
    const before = openPinCount();
    const o = await scope.open('/link-in/file.txt');
    expect(o.node?.stat.isFile()).toBe(true);
    expect(o.folder?.real).toBe(path.join(scopeDir, 'a/b'));
    await o.close();
    expect(openPinCount()).toBe(before);
    await expectStatus(scope.open('/link-out/secret.txt'), 403);
    await expectStatus(scope.open('/loop1'), 403);
    expect(openPinCount()).toBe(before);
  });
});

describe('openPinnedFile', () => {
  it('opens regular files only, and exactly the file that was resolved', async () => {
    const o = await scope.open('/a/b/file.txt');
    const fh = await openPinnedFile(o.node!);
    expect((await fh.readFile('utf8')).toString()).toBe('inside');
    await fh.close();
    await o.close();
    const dir = await scope.open('/a');
    await expectStatus(openPinnedFile(dir.node!), 403);
    await dir.close();
  });

  it('never opens a named pipe', async () => {
    const fifo = path.join(scopeDir, 'fifo');
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [fifo]);
    const o = await scope.open('/fifo');
    await expectStatus(openPinnedFile(o.node!), 403);
    await o.close();
    await fsp.rm(fifo);
  });
});

/** What the kernel says: the real path of a lexical path, or undefined when it does not exist. */
function kernelRealpath(p: string): string | undefined {
  try {
    return fs.realpathSync(p);
  } catch {
    return undefined;
  }
}

const hostileSegment = fc.constantFrom(
  '..',
  '.',
  '',
  '...',
  '%2e%2e',
  '%2E%2E%2F',
  '.%2e',
  '\u2025',
  '．．',
  '\uff0e',
  '..\u2215..',
  '..\\..',
  'a\\..',
  'a\0',
  'a',
  'b',
  'file.txt',
  'scope',
  'outside',
  'other',
  'secret.txt',
  'x.txt',
  ...Object.keys(LINKS).flatMap((l) => l.split('/')),
  'link-abs',
  'link-abs-in',
);
const hostilePath = fc
  .tuple(fc.array(hostileSegment, { maxLength: 8 }), fc.constantFrom('/', '//', ''), fc.boolean())
  .map(
    ([segs, lead, trail]) =>
      lead + segs.join(fc.sample(fc.constantFrom('/', '//', '/./'), 1)[0] ?? '/') + (trail ? '/' : ''),
  );

describe('property: nothing outside the scope is ever reached', () => {
  it('hostile request paths resolve inside the scope or are refused', async () => {
    await fc.assert(
      fc.asyncProperty(hostilePath, async (requestPath) => {
        let resolved;
        try {
          resolved = await scope.resolve(requestPath);
        } catch (err) {
          expect(err).toBeInstanceOf(AppError);
          expect([400, 403]).toContain((err as AppError).status);
          return;
        }
        expect(isInside(scopeDir, resolved.real)).toBe(true);
        expect(isInside(scopeDir, resolved.entry)).toBe(true);
        const kernel = kernelRealpath(path.join(scopeDir, resolved.virtual));
        if (kernel !== undefined) {
          // Whatever exists there per the kernel is what we resolved, and it is inside.
          expect(kernel).toBe(resolved.real);
          expect(isInside(scopeDir, kernel)).toBe(true);
        }
        if (resolved.stat?.isFile()) {
          const o = await scope.open(requestPath);
          const fh = await openPinnedFile(o.node!);
          const text = await fh.readFile('utf8');
          await fh.close();
          await o.close();
          expect(text).not.toBe('SECRET');
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('random symlink chains in a fresh tree agree with the kernel and never escape', async () => {
    const names = ['l0', 'l1', 'l2', 'l3', 'd', 'd/l4', 'd/l5'];
    const target = fc.constantFrom(
      '..',
      '../..',
      '../../..',
      '.',
      'd',
      '../d',
      'l0',
      'l1',
      'l2',
      '../l3',
      'd/l4',
      'l5',
      'missing',
      '../missing',
      '/',
      '/tmp',
      'OUTSIDE',
      'OUTSIDE/secret.txt',
      'file.txt',
      'd/file.txt',
    );
    const links = fc.array(fc.tuple(fc.constantFrom(...names), target), { minLength: 1, maxLength: 7 });
    const probe = fc.array(
      fc.constantFrom(...names.flatMap((n) => n.split('/')), 'file.txt', 'secret.txt', 'missing'),
      {
        minLength: 1,
        maxLength: 5,
      },
    );
    await fc.assert(
      fc.asyncProperty(links, fc.array(probe, { minLength: 1, maxLength: 8 }), async (linkList, probes) => {
        const base = await fsp.mkdtemp(path.join(tmp, 'chain-'));
        const out = path.join(base, 'out');
        const sc = path.join(base, 'root', 'home');
        await fsp.mkdir(path.join(sc, 'd'), { recursive: true });
        await fsp.mkdir(out);
        await fsp.writeFile(path.join(out, 'secret.txt'), 'SECRET');
        await fsp.writeFile(path.join(sc, 'file.txt'), 'ok');
        await fsp.writeFile(path.join(sc, 'd/file.txt'), 'ok');
        for (const [name, t] of linkList) {
          const realTarget = t.replace('OUTSIDE', out);
          await fsp.symlink(realTarget, path.join(sc, name)).catch(() => undefined);
        }
        const s = await Scope.open({
          root: path.join(base, 'root'),
          scope: '/home',
          followExternalSymlinks: false,
        });
        for (const segs of probes) {
          const virtual = '/' + segs.join('/');
          const kernel = kernelRealpath(path.join(sc, virtual));
          let resolved;
          try {
            resolved = await s.resolve(virtual);
          } catch (err) {
            expect((err as AppError).status).toBe(403);
            // Refused: the kernel either finds it outside, or it is dangling/looping.
            if (kernel !== undefined) expect(isInside(sc, kernel)).toBe(false);
            continue;
          }
          expect(isInside(sc, resolved.real)).toBe(true);
          if (kernel !== undefined) expect(resolved.real).toBe(kernel);
          else expect(resolved.stat).toBeUndefined();
        }
        await fsp.rm(base, { recursive: true, force: true });
      }),
      { numRuns: 150 },
    );
  });
});
