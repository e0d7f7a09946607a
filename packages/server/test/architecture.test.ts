import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileAccess, fileAccessFor } from '../src/files/access/access.js';
import { startTestApp, type TestApp } from './helpers.js';

/**
 * The layout that makes a second way to a file impossible: one constructor of file
 * access, one module that touches served files by path, one permission policy, SQL only in the
 * store. Each rule names the files allowed to break it and why; a new exception is a design change
 * and belongs here, reviewed, not in a route.
 */

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

function sources(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [full] : [];
  });
}

const files = sources().map((file) => ({
  name: path.relative(SRC, file).split(path.sep).join('/'),
  text: fs.readFileSync(file, 'utf8'),
}));

/** Files whose text matches `pattern`, minus the allowed ones; an exception no longer needed is listed too. */
function offenders(pattern: RegExp, allowed: Record<string, string>): string[] {
  const hits = files.filter((f) => pattern.test(f.text)).map((f) => f.name);
  const unneeded = Object.keys(allowed).filter((name) => !hits.includes(name));
  return [
    ...hits.filter((name) => !(name in allowed)),
    ...unneeded.map((name) => `unneeded exception: ${name}`),
  ];
}

describe('one file access, made in one place', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('refuses to construct a FileAccess anywhere but files/access.ts, at run time too', async () => {
    const real = await fileAccessFor(t.ctx, (await t.ctx.store.users.get(1))!);
    const parts = { root: real.root, scope: real.scope, rules: real.rules, perm: real.perm };
    expect(() => Reflect.construct(FileAccess, [Symbol('forged'), parts])).toThrow(
      /can only be made by fileAccessFor/,
    );
    const make = FileAccess.make as unknown as (token: symbol, p: unknown) => FileAccess;
    expect(() => make(Symbol('forged'), parts)).toThrow(/can only be made by fileAccessFor/);
    expect(() => make(Symbol.for('FileAccess is made in files/access.ts'), parts)).toThrow();
  });

  it('opens scopes only in files/access.ts', () => {
    expect(
      offenders(/\bScope\.open\(|FileAccess\.make\(/, { 'files/access/access.ts': 'the constructor' }),
    ).toEqual([]);
  });

  it('touches the disk by path only where no served file is reached', () => {
    // A value import of node:fs (type imports are fine: they describe handles opened elsewhere).
    const allowed: Record<string, string> = {
      'files/access/anchor.ts': 'the pinned primitives every served file goes through',
      'files/listing/file-type.ts': 'reads a sample from a descriptor opened through the anchor',
      'files/access/private.ts': "the server's own paths (database, cache, staging)",
      'files/access/case.ts': 'probes whether the root folder itself is case-insensitive',
      'files/listing/dir-snapshot.ts': 'reads folders through pinned /proc/self/fd paths',
      'files/listing/dir-reader-worker.ts':
        'the reader threads: pinned /proc/self/fd paths handed by dir-snapshot.ts',
      'files/listing/adaptive-io.ts': 'measures calls made on pinned paths',
      'files/listing/mime.ts': "reads the system's mime.types",
      'files/archive/index.ts': 'looks for archiver programs on the system',
      'preview/cache.ts': "the server's preview cache folder",
      'preview/images.ts': "the server's preview cache folder",
      'preview/service.ts': "the server's preview cache folder; file bytes come as handles",
      'uploads/resumable.ts': "the server's staging folder for pending uploads",
      'uploads/staging-file.ts': "pending uploads' staging files, in the server's staging folder",
      'uploads/limits.ts': "the free space beside the server's staging folder",
      'runner/executable.ts': 'looks commands up in --execPath, outside the served files',
      'http/static/routes.ts': 'the built web app and the branding folder',
      'http/static/startup.ts': 'the built web app',
      'store/db.ts': 'the database file',
      'store/backup.ts': 'copies of the database file, and the file a restore replaces',
      'store/server-lock.ts': 'the lock file beside the database',
      'store/postgres-backup.ts': 'the dump file an administrator names on the command line',
      'config/sources.ts': 'the configuration file',
      'cli/serve.ts': 'start-up: database and TLS files',
      'cli/export-files.ts': 'files an administrator names on the command line',
    };
    const valueImport = /^import (?!type\b)[^;]*from 'node:fs(?:\/promises)?';/m;
    expect(offenders(valueImport, allowed)).toEqual([]);
    // Path-taking calls on served files would also come through `fs` re-exports or `require`.
    expect(offenders(/require\(['"](?:node:)?fs['"]\)|from 'fs(?:\/promises)?'/, {})).toEqual([]);
  });

  it('reads folders in C only through a pin', () => {
    // The addon takes a bare descriptor: only the pin's own method may hand it one.
    expect(
      offenders(/\.readFolderStats\(/, {
        'files/access/anchor.ts': 'Pinned.nativeEntries, on its own descriptor',
      }),
    ).toEqual([]);
  });

  it('reads permissions only through the policy', () => {
    const allowed: Record<string, string> = {
      'auth/accounts.ts': 'validates permission sets being saved and counts administrators',
      'auth/service.ts': 'noauth signs in as the first administrator',
      'http/settings/routes.ts': 'validates the default permissions being saved',
      'store/users.ts': 'counts administrators',
    };
    expect(
      offenders(/\.perm\.(?:admin|execute|create|rename|modify|delete|share|download)\b/, allowed),
    ).toEqual([]);
  });

  it('keeps SQL in the store', () => {
    const inStore = (name: string) => name.startsWith('store/');
    const sql = files.filter((f) => !inStore(f.name) && /\.prepare\(|\.exec\(\s*`|\bdb\.exec\(/.test(f.text));
    expect(sql.map((f) => f.name)).toEqual([]);
  });
});

/**
 * The modules' import graph: an edge for every relative specifier of an `import … from`,
 * `export … from`, side-effect `import '…'` or literal `import('…')`, type-only ones included (a
 * type import ties two modules' designs together as much as a value import does).
 */
function importGraph(): { edges: Map<string, string[]>; unresolved: string[] } {
  const names = new Set(files.map((f) => f.name));
  const specifier =
    /(?:^|[\n;])\s*(?:import|export)\s+[\w\s{},*$]*?\bfrom\s*'(\.{1,2}\/[^']+)'|(?:^|[\n;])\s*import\s*'(\.{1,2}\/[^']+)'|\bimport\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;
  const edges = new Map<string, string[]>();
  const unresolved: string[] = [];
  for (const f of files) {
    const out = new Set<string>();
    for (const m of f.text.matchAll(specifier)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      const base = path.posix.join(path.posix.dirname(f.name), spec).replace(/\.js$/, '');
      const target = [`${base}.ts`, `${base}/index.ts`].find((name) => names.has(name));
      if (target) out.add(target);
      else if (!base.startsWith('..')) unresolved.push(`${f.name} -> ${spec}`);
    }
    edges.set(f.name, [...out]);
  }
  return { edges, unresolved };
}

/** The import circles: strongly connected components of more than one module, or a module importing itself. */
function importCircles(edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || edges.get(v)!.includes(v)) circles.push(component.sort());
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return circles;
}

describe('the module layout', () => {
  it('has no import circle among the server modules, type-only imports included', () => {
    const { edges, unresolved } = importGraph();
    // The check is only as good as the graph it reads: every module, every relative import.
    expect(edges.size).toBeGreaterThan(150);
    expect([...edges.values()].reduce((n, out) => n + out.length, 0)).toBeGreaterThan(600);
    expect(edges.get('app.ts')).toContain('context.ts');
    expect(unresolved).toEqual([]);
    expect(importCircles(edges).map((circle) => `circle of ${circle.join(', ')}`)).toEqual([]);
  });

  it('finds a circle, through type-only imports too', () => {
    const planted = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['d.ts']],
      ['e.ts', ['a.ts']],
    ]);
    expect(importCircles(planted)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['d.ts']]);
  });

  it('keeps every server module under 600 lines', () => {
    const long = files.filter((f) => f.text.split('\n').length > 600).map((f) => f.name);
    expect(files.length).toBeGreaterThan(150);
    expect(long).toEqual([]);
  });
});
