import { execFileSync } from 'node:child_process';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { TrashItem } from '@filebrowser/contract';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { serverPaths } from '../src/files/access/private.js';
import { isStagingName, stagingName } from '../src/files/access/staging-names.js';
import { openStore } from '../src/store/index.js';
import { ALL, denyRe, PASSWORD, renameWindow, startFilesApp, type FilesApp } from './files-helpers.js';
import { mountTmpfs, unmountTmpfs } from './tools.js';

/**
 * A move across file systems copies, then switches, with a record in the
 * database of how far it came. The start after a crash finishes a move whose copy was whole and
 * undoes one whose copy was not. The kill of a real process in the middle of such a move is in
 * e2e/tests/crash.test.ts (it lands in the copy); here the database and folders are left as a process killed
 * at each later point leaves them, and the moves themselves run on a real second file system.
 */
let t: FilesApp | undefined;
let disk: string | undefined;
afterEach(async () => {
  if (disk) unmountTmpfs(disk);
  disk = undefined;
  await t?.close();
  t = undefined;
});

/** Starts a second app over the same database and folders (the start after the crash), then stops it. */
async function restart(app: FilesApp): Promise<void> {
  const store = await openStore(app.ctx.config.database);
  const { app: next } = await buildApp(app.ctx.config, store);
  try {
    await next.ready();
  } finally {
    await next.close();
    await store.close();
  }
}

const exists = (p: string) =>
  fs.lstat(p).then(
    () => true,
    () => false,
  );

/** A folder with a file and a link, as a move would copy it. */
async function makeFolder(at: string, text: string): Promise<void> {
  await fs.mkdir(path.join(at, 'sub'), { recursive: true });
  await fs.writeFile(path.join(at, 'sub', 'a.txt'), text);
  await fs.symlink('sub/a.txt', path.join(at, 'link'));
}

async function readFolder(at: string): Promise<{ text: string; link: string }> {
  return {
    text: await fs.readFile(path.join(at, 'sub', 'a.txt'), 'utf8'),
    link: await fs.readlink(path.join(at, 'link')),
  };
}

/**
 * Two folders of a home and a move's record between them, as `begin` writes it: `source` makes
 * what is moved (`from/docs`) first, when the test has one.
 */
async function leftMove(app: FilesApp, source?: (at: string) => Promise<void>) {
  const home = await fs.realpath(path.join(app.root, 'bob'));
  const from = path.join(home, 'from');
  const to = path.join(home, 'to');
  await fs.mkdir(from);
  await fs.mkdir(to);
  await source?.(path.join(from, 'docs'));
  const st = await fs.lstat(path.join(from, 'docs'), { bigint: true }).catch(() => undefined);
  const record = {
    sourceFolder: from,
    sourceName: 'docs',
    sourceId: st ? `${st.dev}:${st.ino}:${st.birthtimeNs}` : 'none',
    hiddenName: stagingName('docs'),
    destFolder: to,
    stagingName: stagingName('docs'),
    destName: 'docs',
  };
  const id = await app.ctx.store.moves.add(record);
  return { home, from, to, record, id };
}

const source = (at: string) => makeFolder(at, 'the source');

/** The copy a move makes of `makeFolder`'s folder: the same, with the file's times. */
async function copyAsMoved(from: string, to: string): Promise<void> {
  await fs.cp(from, to, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
}

describe('the start after a crash', () => {
  it('undoes a move killed while copying: the partial copy goes, the source stays whole', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { from, to, record } = await leftMove(t, source);
    // Half a copy under its staging name.
    await fs.mkdir(path.join(to, record.stagingName, 'sub'), { recursive: true });

    await restart(t);
    expect(await readFolder(path.join(from, 'docs'))).toEqual({ text: 'the source', link: 'sub/a.txt' });
    expect(await fs.readdir(from)).toEqual(['docs']);
    expect(await fs.readdir(to)).toEqual([]);
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('finishes a move whose copy was whole: the copy takes the name, the source goes', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { from, to, record, id } = await leftMove(t, source);
    await copyAsMoved(path.join(from, 'docs'), path.join(to, record.stagingName));
    await t.ctx.store.moves.markCopied(id);

    await restart(t);
    expect(await readFolder(path.join(to, 'docs'))).toEqual({ text: 'the source', link: 'sub/a.txt' });
    expect(await fs.readdir(to)).toEqual(['docs']);
    expect(await fs.readdir(from)).toEqual([]);
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('gives back to the source what the whole copy does not hold as it is: nothing is lost', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { from, to, record, id } = await leftMove(t, source);
    await copyAsMoved(path.join(from, 'docs'), path.join(to, record.stagingName));
    // Put into the source, and changed in it, after the copy read it.
    await fs.writeFile(path.join(from, 'docs', 'sub', 'late.txt'), 'late');
    await fs.writeFile(path.join(from, 'docs', 'sub', 'a.txt'), 'changed since');
    await t.ctx.store.moves.markCopied(id);

    await restart(t);
    expect(await readFolder(path.join(to, 'docs'))).toEqual({ text: 'the source', link: 'sub/a.txt' });
    expect(await fs.readdir(from)).toEqual(['docs']);
    expect(await fs.readdir(path.join(from, 'docs'))).toEqual(['sub']);
    expect((await fs.readdir(path.join(from, 'docs', 'sub'))).sort()).toEqual(['a.txt', 'late.txt']);
    expect(await fs.readFile(path.join(from, 'docs', 'sub', 'a.txt'), 'utf8')).toBe('changed since');
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('finishes removing a source that was hidden and half removed when the process died', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { from, to, record, id } = await leftMove(t);
    // Switched, then the source renamed to its hidden name and partly removed.
    await makeFolder(path.join(to, 'docs'), 'the source');
    await fs.mkdir(path.join(from, record.hiddenName, 'sub'), { recursive: true });
    await t.ctx.store.moves.markCopied(id);

    await restart(t);
    expect(await readFolder(path.join(to, 'docs'))).toEqual({ text: 'the source', link: 'sub/a.txt' });
    expect(await fs.readdir(from)).toEqual([]);
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('keeps the source when no copy is to be found, whatever the record says', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { from, to, id } = await leftMove(t, (at) => makeFolder(at, 'the only one'));
    await t.ctx.store.moves.markCopied(id);

    await restart(t);
    expect(await readFolder(path.join(from, 'docs'))).toEqual({ text: 'the only one', link: 'sub/a.txt' });
    expect(await fs.readdir(to)).toEqual([]);
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('gives a hidden source its name back when the copy is nowhere to be found', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { from, to, record, id } = await leftMove(t);
    // Switched and hidden, then the destination's folder was renamed before the process died.
    await makeFolder(path.join(from, record.hiddenName), 'the only one here');
    await makeFolder(path.join(to, 'docs'), 'the copy');
    await fs.rename(to, `${to}-renamed`);
    await t.ctx.store.moves.markCopied(id);

    await restart(t);
    expect(await fs.readdir(from)).toEqual(['docs']);
    expect(await readFolder(path.join(from, 'docs'))).toEqual({
      text: 'the only one here',
      link: 'sub/a.txt',
    });
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('removes nothing that took the source’s name since the record was made', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { from, to, record, id } = await leftMove(t, source);
    await makeFolder(path.join(to, record.stagingName), 'the source');
    // The source went by other means, and a new folder took its name (or the database is a backup).
    await fs.rename(path.join(from, 'docs'), path.join(t.outside, 'old-docs'));
    await makeFolder(path.join(from, 'docs'), 'a new folder');
    await t.ctx.store.moves.markCopied(id);

    await restart(t);
    expect(await readFolder(path.join(from, 'docs'))).toEqual({ text: 'a new folder', link: 'sub/a.txt' });
    expect(await readFolder(path.join(to, 'docs'))).toEqual({ text: 'the source', link: 'sub/a.txt' });
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('never reaches through a link planted where a recorded folder was', async () => {
    t = await startFilesApp();
    await t.user('bob');
    const { to, record, id } = await leftMove(t);
    await fs.mkdir(path.join(t.outside, 'target', record.hiddenName), { recursive: true });
    await fs.writeFile(path.join(t.outside, 'target', record.hiddenName, 'keep.txt'), 'outside the root');
    await makeFolder(path.join(to, record.stagingName), 'the copy');
    // The source folder was replaced by a link to a folder outside the root.
    await fs.rm(record.sourceFolder, { recursive: true });
    await fs.symlink(path.join(t.outside, 'target'), record.sourceFolder);
    await t.ctx.store.moves.markCopied(id);

    await restart(t);
    expect(await fs.readFile(path.join(t.outside, 'target', record.hiddenName, 'keep.txt'), 'utf8')).toBe(
      'outside the root',
    );
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
  });
});

describe('a folder moved onto an existing one', () => {
  it('is merged into it; the source goes, and no record or staging name is left', async () => {
    t = await startFilesApp();
    const bob = await t.user('bob');
    const home = path.join(t.root, 'bob');
    await makeFolder(path.join(home, 'docs'), 'merged');
    await fs.mkdir(path.join(home, 'into', 'docs'), { recursive: true });
    await fs.writeFile(path.join(home, 'into', 'docs', 'kept.txt'), 'kept');
    const res = await t.req(bob, {
      method: 'PATCH',
      url: '/api/resources/docs?action=rename&destination=%2Finto%2Fdocs&override=true',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await fs.readdir(path.join(home, 'into', 'docs'))).sort()).toEqual(['kept.txt', 'link', 'sub']);
    expect(await fs.readFile(path.join(home, 'into', 'docs', 'sub', 'a.txt'), 'utf8')).toBe('merged');
    expect(await fs.readdir(home)).toEqual(['into']);
    expect(await t.ctx.store.moves.orphaned([])).toEqual([]);
    expect(await t.ctx.store.staging.orphaned([])).toEqual([]);
  });
});

describe('a folder merged into another', () => {
  const seam = renameWindow();
  afterEach(() => seam.clear());

  /** Bob's `docs` (a file and a link) and `into/docs` (a file of its own) to merge it into. */
  async function twoFolders() {
    t = await startFilesApp({}, seam.build);
    const bob = await t.user('bob');
    const home = path.join(t.root, 'bob');
    await makeFolder(path.join(home, 'docs'), 'merged');
    await fs.mkdir(path.join(home, 'into', 'docs'), { recursive: true });
    await fs.writeFile(path.join(home, 'into', 'docs', 'kept.txt'), 'kept');
    const merge = () =>
      t!.req(bob, {
        method: 'PATCH',
        url: '/api/resources/docs?action=rename&destination=%2Finto%2Fdocs&override=true',
      });
    return { bob, home, merge };
  }

  it('moves each entry by itself: what is uploaded to the source meanwhile stays, in its folder', async () => {
    const { bob, home, merge } = await twoFolders();
    let late: number | undefined;
    seam.next(async () => {
      late = (await t!.req(bob, { method: 'POST', url: '/api/resources/docs/late.txt', payload: 'late' }))
        .statusCode;
    });

    const res = await merge();
    expect(res.statusCode, res.body).toBe(200);
    expect(late).toBe(200);
    expect(await fs.readdir(path.join(home, 'docs'))).toEqual(['late.txt']);
    expect(await fs.readFile(path.join(home, 'docs', 'late.txt'), 'utf8')).toBe('late');
    expect((await fs.readdir(path.join(home, 'into', 'docs'))).sort()).toEqual(['kept.txt', 'link', 'sub']);
    // A move keeps links as links.
    expect(await fs.readlink(path.join(home, 'into', 'docs', 'link'))).toBe('sub/a.txt');
    expect(await t!.ctx.store.moves.orphaned([])).toEqual([]);
  });

  it('where a folder meets a file is refused before anything moves', async () => {
    const { home, merge } = await twoFolders();
    // Where the source has the folder `sub`, the destination has a file.
    await fs.writeFile(path.join(home, 'into', 'docs', 'sub'), 'a file');

    const res = await merge();
    expect(res.statusCode, res.body).toBe(409);
    expect(await readFolder(path.join(home, 'docs'))).toEqual({ text: 'merged', link: 'sub/a.txt' });
    expect((await fs.readdir(home)).sort()).toEqual(['docs', 'into']);
    expect((await fs.readdir(path.join(home, 'into', 'docs'))).sort()).toEqual(['kept.txt', 'sub']);
  });

  it('that fails midway puts back every file it had replaced, on both sides', async () => {
    const { home, merge } = await twoFolders();
    for (const name of ['a.txt', 'b.txt']) {
      await fs.writeFile(path.join(home, 'docs', name), `new ${name}`);
      await fs.writeFile(path.join(home, 'into', 'docs', name), `old ${name}`);
    }
    // The first file is replaced; the second fails to be.
    seam.next(() => {
      seam.next(() => Promise.reject(Object.assign(new Error('the disk went away'), { code: 'EIO' })));
      return Promise.resolve();
    });

    const res = await merge();
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(500);
    for (const name of ['a.txt', 'b.txt']) {
      expect(await fs.readFile(path.join(home, 'docs', name), 'utf8')).toBe(`new ${name}`);
      expect(await fs.readFile(path.join(home, 'into', 'docs', name), 'utf8')).toBe(`old ${name}`);
    }
    expect((await fs.readdir(path.join(home, 'docs'))).sort()).toEqual(['a.txt', 'b.txt', 'link', 'sub']);
    expect((await fs.readdir(path.join(home, 'into', 'docs'))).sort()).toEqual([
      'a.txt',
      'b.txt',
      'kept.txt',
    ]);
  });

  it('never shows a file it replaced under the source’s name while it runs: hidden, and recorded for the next start', async () => {
    const { home, merge } = await twoFolders();
    for (const name of ['a.txt', 'b.txt']) {
      await fs.writeFile(path.join(home, 'docs', name), `new ${name}`);
      await fs.writeFile(path.join(home, 'into', 'docs', name), `old ${name}`);
    }
    let midway: { names: string[]; texts: string[]; recorded: string[] } | undefined;
    // When the second file is about to land, the first has replaced its old one.
    seam.next(() => {
      seam.next(async () => {
        const names = (await fs.readdir(path.join(home, 'docs'))).sort();
        const texts = await Promise.all(
          names.filter((n) => n.endsWith('.txt')).map((n) => fs.readFile(path.join(home, 'docs', n), 'utf8')),
        );
        const recorded = (await t!.ctx.store.staging.orphaned([])).map((r) => r.name);
        midway = { names, texts, recorded };
      });
      return Promise.resolve();
    });

    const res = await merge();
    expect(res.statusCode, res.body).toBe(200);
    // A process killed there would have left no old file looking like one of the source's (a
    // second merge would have put it back over the new one); the next start removes the hidden one.
    expect(midway!.texts.every((text) => text.startsWith('new '))).toBe(true);
    expect(midway!.recorded).toHaveLength(1);
    expect(isStagingName(midway!.recorded[0]!)).toBe(true);
    expect(midway!.names).toContain(midway!.recorded[0]);
    for (const name of ['a.txt', 'b.txt']) {
      expect(await fs.readFile(path.join(home, 'into', 'docs', name), 'utf8')).toBe(`new ${name}`);
    }
    expect(await t!.ctx.store.staging.orphaned([])).toEqual([]);
  });

  it('that fails midway leaves a file another user saved over a moved one where they saved it', async () => {
    const { home, merge } = await twoFolders();
    for (const name of ['a.txt', 'b.txt']) {
      await fs.writeFile(path.join(home, 'docs', name), `new ${name}`);
      await fs.writeFile(path.join(home, 'into', 'docs', name), `old ${name}`);
    }
    // Once a.txt has moved, someone saves over it at the destination; then the merge fails.
    seam.next(() => {
      seam.next(async () => {
        await fs.writeFile(path.join(home, 'into', 'docs', 'a.saving'), 'saved since');
        await fs.rename(
          path.join(home, 'into', 'docs', 'a.saving'),
          path.join(home, 'into', 'docs', 'a.txt'),
        );
        throw Object.assign(new Error('the disk went away'), { code: 'EIO' });
      });
      return Promise.resolve();
    });

    const res = await merge();
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(500);
    expect(await fs.readFile(path.join(home, 'into', 'docs', 'a.txt'), 'utf8')).toBe('saved since');
    expect(await fs.readFile(path.join(home, 'into', 'docs', 'b.txt'), 'utf8')).toBe('old b.txt');
    expect(await fs.readFile(path.join(home, 'docs', 'b.txt'), 'utf8')).toBe('new b.txt');
    // Nothing of the destination's came over into the source.
    for (const name of await fs.readdir(path.join(home, 'docs'))) {
      if (name.endsWith('.txt'))
        expect(await fs.readFile(path.join(home, 'docs', name), 'utf8')).not.toBe('saved since');
    }
    expect(await t!.ctx.store.staging.orphaned([])).toEqual([]);
  });

  it('lands nothing in a destination renamed meanwhile into a folder another user locked', async () => {
    const { home, merge } = await twoFolders();
    await t!.user('carol', { scope: '/' });
    await fs.mkdir(path.join(t!.root, 'carols'));
    await fs.mkdir(path.join(home, 'docs', 'z'));
    await fs.writeFile(path.join(home, 'docs', 'z', 'f.txt'), 'z');
    // Once the first entry landed, carol takes the destination into her folder and locks it whole.
    seam.next(async () => {
      await fs.rename(path.join(home, 'into', 'docs'), path.join(t!.root, 'carols', 'docs'));
      const locked = await t!.req(undefined, {
        method: 'LOCK',
        url: '/dav/carols/docs',
        headers: {
          authorization: 'Basic ' + Buffer.from(`carol:${PASSWORD}`).toString('base64'),
          depth: 'infinity',
          timeout: 'Second-600',
          'content-type': 'application/xml',
        },
        payload:
          '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>carol</D:owner></D:lockinfo>',
      });
      expect(locked.statusCode, locked.body).toBe(200);
    });

    const res = await merge();
    expect(res.statusCode, res.body).toBe(423);
    // What had moved went back; nothing of bob's is left in carol's locked folder.
    expect((await fs.readdir(path.join(t!.root, 'carols', 'docs'))).sort()).toEqual(['kept.txt']);
    expect((await fs.readdir(path.join(home, 'docs'))).sort()).toEqual(['link', 'sub', 'z']);
  });

  it('that ends whole removes what it replaced and the source folders it emptied', async () => {
    const { home, merge } = await twoFolders();
    await fs.writeFile(path.join(home, 'docs', 'kept.txt'), 'new kept');
    const res = await merge();
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readFile(path.join(home, 'into', 'docs', 'kept.txt'), 'utf8')).toBe('new kept');
    expect(await fs.readdir(home)).toEqual(['into']);
  });

  it('that fails midway moves back what had moved, and hides nothing', async () => {
    const { home, merge } = await twoFolders();
    await fs.mkdir(path.join(home, 'docs', 'z'));
    await fs.writeFile(path.join(home, 'docs', 'z', 'f.txt'), 'z');
    // Once the first entry moved, the name `z` is taken in the destination by a file.
    seam.next(async () => await fs.writeFile(path.join(home, 'into', 'docs', 'z'), 'in the way'));

    const res = await merge();
    expect(res.statusCode, res.body).toBe(409);
    expect((await fs.readdir(path.join(home, 'docs'))).sort()).toEqual(['link', 'sub', 'z']);
    expect(await readFolder(path.join(home, 'docs'))).toEqual({ text: 'merged', link: 'sub/a.txt' });
    expect((await fs.readdir(path.join(home, 'into', 'docs'))).sort()).toEqual(['kept.txt', 'z']);
  });
});

describe('what is put into the source of a copy or merge while it runs', () => {
  const seam = renameWindow();
  afterEach(() => seam.clear());

  it.each(['rename', 'copy'])(
    'lands only where the rules let it (%s): a file they hide is never replaced',
    async (action) => {
      t = await startFilesApp({}, seam.build);
      // dave's rules hide every payroll.txt.
      const dave = await t.user('dave', { rules: [denyRe('payroll\\.txt$')] });
      const home = path.join(t.root, 'dave');
      const folders = Array.from({ length: 8 }, (_, i) => `z${i}`);
      await fs.mkdir(path.join(home, 'src'), { recursive: true });
      await fs.writeFile(path.join(home, 'src', '0.txt'), 'new');
      await fs.mkdir(path.join(home, 'dst'), { recursive: true });
      await fs.writeFile(path.join(home, 'dst', '0.txt'), 'old');
      for (const name of folders) {
        await fs.mkdir(path.join(home, 'src', name));
        await fs.mkdir(path.join(home, 'dst', name));
        await fs.writeFile(path.join(home, 'dst', name, 'payroll.txt'), 'someone else’s');
      }
      // When the first file lands, a payroll.txt goes into every source folder.
      seam.next(async () => {
        for (const name of folders) await fs.writeFile(path.join(home, 'src', name, 'payroll.txt'), 'dave’s');
      });
      const res = await t.req(dave, {
        method: 'PATCH',
        url: `/api/resources/src?action=${action}&destination=%2Fdst&override=true`,
      });
      expect([200, 403], res.body).toContain(res.statusCode);
      for (const name of folders) {
        expect(await fs.readFile(path.join(home, 'dst', name, 'payroll.txt'), 'utf8')).toBe('someone else’s');
      }
    },
  );
});

describe('a move across file systems', () => {
  const WHY = 'a move across file systems needs a second file system inside the root';
  const seam = renameWindow();
  afterEach(() => seam.clear());

  /** The app with a small tmpfs mounted at `<bob's home>/mnt`. */
  async function withMount(size: string): Promise<{ bob: string; home: string; mnt: string } | undefined> {
    t = await startFilesApp({}, seam.build);
    const bob = await t.user('bob');
    const home = path.join(t.root, 'bob');
    const mnt = path.join(home, 'mnt');
    fsSync.mkdirSync(mnt);
    if (!mountTmpfs(mnt, size, WHY)) return undefined;
    disk = mnt;
    return { bob, home, mnt };
  }

  const move = (bob: string, from: string, to: string, extra = '') =>
    t!.req(bob, {
      method: 'PATCH',
      url: `/api/resources${from}?action=rename&destination=${encodeURIComponent(to)}${extra}`,
    });

  it('moves a folder, links as links, and leaves no record and no staging name', async () => {
    const m = await withMount('4m');
    if (!m) return;
    await makeFolder(path.join(m.home, 'docs'), 'moved');
    const res = await move(m.bob, '/docs', '/mnt/docs');
    expect(res.statusCode, res.body).toBe(200);
    expect(await readFolder(path.join(m.mnt, 'docs'))).toEqual({ text: 'moved', link: 'sub/a.txt' });
    expect(await exists(path.join(m.home, 'docs'))).toBe(false);
    expect((await fs.readdir(m.home)).sort()).toEqual(['mnt']);
    expect(await fs.readdir(m.mnt)).toEqual(['docs']);
    expect(await t!.ctx.store.moves.orphaned([])).toEqual([]);
    expect(await t!.ctx.store.staging.orphaned([])).toEqual([]);
  });

  /** Runs `act` when the copy is about to land a file named `name` (once the folders above were read). */
  const whenFileCopied = (name: string, act: () => Promise<unknown>) => {
    const wait = () =>
      seam.next(async (real) => {
        if (path.basename(real) === name) await act();
        else wait();
      });
    wait();
  };
  const whenFirstFileCopied = (act: () => Promise<unknown>) => whenFileCopied('a.txt', act);

  /** Uploads, as carol would through the API, into the folder being moved. */
  const upload = (token: string, p: string, text: string, override = false) =>
    t!.req(token, {
      method: 'POST',
      url: `/api/resources${p}${override ? '?override=true' : ''}`,
      payload: text,
    });

  it.each([
    ['moved', '/docs', '/mnt/docs', ''],
    ['merged', '/docs', '/mnt/docs', '&override=true'],
  ])(
    'a folder %s: what is uploaded into it while it is copied stays in the source, in its folder',
    async (how, from, to, extra) => {
      const m = await withMount('4m');
      if (!m) return;
      await makeFolder(path.join(m.home, 'docs'), 'moved');
      // A merge moves into an existing folder: its folder entries still go across as folders.
      if (how === 'merged') await fs.mkdir(path.join(m.mnt, 'docs'));
      const late: number[] = [];
      whenFirstFileCopied(async () => {
        late.push((await upload(m.bob, '/docs/late.txt', 'late')).statusCode);
        late.push((await upload(m.bob, '/docs/sub/late2.txt', 'late 2')).statusCode);
      });

      const res = await move(m.bob, from, to, extra);
      expect(res.statusCode, res.body).toBe(200);
      expect(late).toEqual([200, 200]);
      expect(await readFolder(path.join(m.mnt, 'docs'))).toEqual({ text: 'moved', link: 'sub/a.txt' });
      expect((await fs.readdir(path.join(m.home, 'docs'))).sort()).toEqual(['late.txt', 'sub']);
      expect(await fs.readdir(path.join(m.home, 'docs', 'sub'))).toEqual(['late2.txt']);
      expect(await fs.readFile(path.join(m.home, 'docs', 'late.txt'), 'utf8')).toBe('late');
      expect(await fs.readFile(path.join(m.home, 'docs', 'sub', 'late2.txt'), 'utf8')).toBe('late 2');
      expect(await t!.ctx.store.moves.orphaned([])).toEqual([]);
    },
  );

  it('a file replaced in the source while it is copied stays there as replaced', async () => {
    const m = await withMount('4m');
    if (!m) return;
    await makeFolder(path.join(m.home, 'docs'), 'as read');
    whenFirstFileCopied(() => upload(m.bob, '/docs/sub/a.txt', 'replaced meanwhile', true));

    const res = await move(m.bob, '/docs', '/mnt/docs');
    expect(res.statusCode, res.body).toBe(200);
    expect(await readFolder(path.join(m.mnt, 'docs'))).toEqual({ text: 'as read', link: 'sub/a.txt' });
    expect(await fs.readdir(path.join(m.home, 'docs'))).toEqual(['sub']);
    expect(await fs.readFile(path.join(m.home, 'docs', 'sub', 'a.txt'), 'utf8')).toBe('replaced meanwhile');
  });

  it('keeps the modification times of the files it moves', async () => {
    const m = await withMount('4m');
    if (!m) return;
    await makeFolder(path.join(m.home, 'docs'), 'old');
    await fs.writeFile(path.join(m.home, 'one.txt'), 'one');
    const then = new Date('2020-02-29T12:34:56.789Z');
    for (const p of ['docs/sub/a.txt', 'one.txt']) await fs.utimes(path.join(m.home, p), then, then);

    expect((await move(m.bob, '/docs', '/mnt/docs')).statusCode).toBe(200);
    expect((await move(m.bob, '/one.txt', '/mnt/one.txt')).statusCode).toBe(200);
    for (const p of ['docs/sub/a.txt', 'one.txt']) {
      expect((await fs.stat(path.join(m.mnt, p))).mtime.toISOString()).toBe(then.toISOString());
    }
  });

  it('deleting a folder into the trash on the other file system: what is uploaded meanwhile stays', async () => {
    const m = await withMount('4m');
    if (!m) return;
    await makeFolder(path.join(m.mnt, 'docs'), 'deleted');
    whenFirstFileCopied(() => upload(m.bob, '/mnt/docs/late.txt', 'late'));

    const res = await t!.req(m.bob, { method: 'DELETE', url: '/api/resources/mnt/docs' });
    expect(res.statusCode, res.body).toBe(204);
    expect(res.headers['x-trash-copied']).toBe('true');
    // The delete took what it saw (into the trash); the upload it did not see is where it went.
    expect(await fs.readdir(path.join(m.mnt, 'docs'))).toEqual(['late.txt']);
    const [item] = (await t!.get(m.bob, '/api/trash')).json() as TrashItem[];
    expect(item).toMatchObject({ path: '/mnt/docs', size: 7 });
    const kept = path.join(serverPaths(t!.ctx.config).trashDir, String(item!.userID), item!.id, 'docs');
    expect(await readFolder(kept)).toEqual({ text: 'deleted', link: 'sub/a.txt' });
    expect((await fs.readdir(kept)).sort()).toEqual(['link', 'sub']);
  });

  it('moves one item once: parallel deletes into the trash, then parallel restores, make one copy', async () => {
    const m = await withMount('8m');
    if (!m) return;
    await fs.mkdir(path.join(m.mnt, 'big'));
    await fs.writeFile(path.join(m.mnt, 'big', 'a.bin'), Buffer.alloc(1024 * 1024, 1));
    const four = <T>(make: () => Promise<T>) => Promise.all([make(), make(), make(), make()]);

    const deletes = await four(() => t!.req(m.bob, { method: 'DELETE', url: '/api/resources/mnt/big' }));
    const deleted = deletes.map((r) => r.statusCode);
    expect(
      deleted.filter((code) => code === 204),
      deletes.map((r) => r.body).join(),
    ).toHaveLength(1);
    for (const code of deleted) expect([204, 404, 409]).toContain(code);
    const items = (await t!.get(m.bob, '/api/trash')).json() as TrashItem[];
    expect(items).toHaveLength(1);

    const restores = await four(() =>
      t!.req(m.bob, { method: 'POST', url: `/api/trash/${items[0]!.id}/restore` }),
    );
    const restored = restores.map((r) => r.statusCode);
    expect(
      restored.filter((code) => code === 200),
      restores.map((r) => r.body).join(),
    ).toHaveLength(1);
    for (const code of restored) expect([200, 404, 409]).toContain(code);
    expect(await fs.readdir(m.mnt)).toEqual(['big']);
    expect(await fs.readdir(path.join(m.mnt, 'big'))).toEqual(['a.bin']);
    expect((await t!.get(m.bob, '/api/trash')).json()).toEqual([]);
  });

  it('into a quota counts what it really copied, folders filled while it copied included', async () => {
    const m = await withMount('8m');
    if (!m) return;
    const root = await t!.user('root', { scope: '/', perm: { ...ALL, admin: true } });
    const carl = await t!.user('carl', { quota: 1_000_000 });
    const src = path.join(m.mnt, 'src');
    const folders = Array.from({ length: 8 }, (_, i) => `z${i}`);
    for (const name of folders) await fs.mkdir(path.join(src, name), { recursive: true });
    await fs.writeFile(path.join(src, 'a.txt'), Buffer.alloc(1000, 1));
    // When the copy lands its first file, a file goes into every folder it has not read yet.
    whenFileCopied('a.txt', async () => {
      for (const name of folders)
        await fs.writeFile(path.join(src, name, 'late.bin'), Buffer.alloc(50_000, 2));
    });

    const res = await move(root, '/bob/mnt/src', '/carl/src');
    expect(res.statusCode, res.body).toBe(200);
    let onDisk = 0;
    for (const e of await fs.readdir(path.join(t!.root, 'carl'), { recursive: true, withFileTypes: true })) {
      if (e.isFile()) onDisk += (await fs.stat(path.join(e.parentPath, e.name))).size;
    }
    expect(onDisk).toBeGreaterThan(1000);
    const usage = (await t!.get(carl, '/api/usage/')).json() as { used: number };
    expect(usage.used).toBe(onDisk);
  });

  it('merged into a folder on the other file system, a link to the folder serves nothing of it', async () => {
    const m = await withMount('4m');
    if (!m) return;
    await fs.mkdir(path.join(m.home, 'docs'));
    await fs.writeFile(path.join(m.home, 'docs', 'pub.txt'), 'public');
    await fs.mkdir(path.join(m.mnt, 'docs'));
    await fs.writeFile(path.join(m.mnt, 'docs', 'secret.txt'), 'SECRET');
    const made = await t!.req(m.bob, { method: 'POST', url: '/api/share/docs/', payload: {} });
    expect(made.statusCode, made.body).toBe(200);
    const { hash } = made.json() as { hash: string };
    expect((await t!.req(undefined, { method: 'GET', url: `/api/public/share/${hash}` })).statusCode).toBe(
      200,
    );

    const res = await move(m.bob, '/docs', '/mnt/docs', '&override=true');
    expect(res.statusCode, res.body).toBe(200);
    for (const url of [`/api/public/share/${hash}`, `/api/public/dl/${hash}/secret.txt`]) {
      const pub = await t!.req(undefined, { method: 'GET', url });
      expect(pub.statusCode, url).toBe(404);
      expect(pub.body).not.toContain('SECRET');
    }
  });

  it('merges a folder replacing files on the other file system', async () => {
    const m = await withMount('4m');
    if (!m) return;
    await makeFolder(path.join(m.home, 'docs'), 'new');
    await makeFolder(path.join(m.mnt, 'docs'), 'old');
    await fs.rm(path.join(m.mnt, 'docs', 'link'));
    const res = await move(m.bob, '/docs', '/mnt/docs', '&override=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(await readFolder(path.join(m.mnt, 'docs'))).toEqual({ text: 'new', link: 'sub/a.txt' });
    expect(await exists(path.join(m.home, 'docs'))).toBe(false);
  });

  it('replaces an existing file in one rename with override', async () => {
    const m = await withMount('4m');
    if (!m) return;
    await fs.writeFile(path.join(m.home, 'a.txt'), 'new');
    await fs.writeFile(path.join(m.mnt, 'a.txt'), 'old');
    const clash = await move(m.bob, '/a.txt', '/mnt/a.txt');
    expect(clash.statusCode).toBe(409);
    const res = await move(m.bob, '/a.txt', '/mnt/a.txt', '&override=true');
    expect(res.statusCode, res.body).toBe(200);
    expect(await fs.readFile(path.join(m.mnt, 'a.txt'), 'utf8')).toBe('new');
    expect(await fs.readdir(m.mnt)).toEqual(['a.txt']);
    expect(await exists(path.join(m.home, 'a.txt'))).toBe(false);
  });

  it('refuses a special file, which stays where it is, also inside a folder it moves', async () => {
    const m = await withMount('1m');
    if (!m) return;
    execFileSync('mkfifo', [path.join(m.home, 'pipe')]);
    const res = await move(m.bob, '/pipe', '/mnt/pipe');
    expect(res.statusCode, res.body).toBe(403);
    expect((await fs.lstat(path.join(m.home, 'pipe'))).isFIFO()).toBe(true);
    expect(await fs.readdir(m.mnt)).toEqual([]);
    expect(await t!.ctx.store.moves.orphaned([])).toEqual([]);
    // Inside a folder, the folder moves and the special file, which no copy can make, stays.
    await fs.mkdir(path.join(m.home, 'docs'));
    await fs.writeFile(path.join(m.home, 'docs', 'a.txt'), 'a');
    await fs.rename(path.join(m.home, 'pipe'), path.join(m.home, 'docs', 'pipe'));
    const folder = await move(m.bob, '/docs', '/mnt/docs');
    expect(folder.statusCode, folder.body).toBe(200);
    expect(await fs.readdir(path.join(m.mnt, 'docs'))).toEqual(['a.txt']);
    expect(await fs.readdir(path.join(m.home, 'docs'))).toEqual(['pipe']);
  });

  it('onto a disk too small answers 507; the source stays whole and nothing is left on the disk', async () => {
    const m = await withMount('1m');
    if (!m) return;
    await fs.mkdir(path.join(m.home, 'docs'));
    await fs.writeFile(path.join(m.home, 'docs', 'a.bin'), Buffer.alloc(700 * 1024, 1));
    await fs.writeFile(path.join(m.home, 'docs', 'b.bin'), Buffer.alloc(700 * 1024, 2));
    const res = await move(m.bob, '/docs', '/mnt/docs');
    expect(res.statusCode, res.body).toBe(507);
    expect((await fs.readdir(path.join(m.home, 'docs'))).sort()).toEqual(['a.bin', 'b.bin']);
    expect((await fs.readFile(path.join(m.home, 'docs', 'b.bin'))).every((b) => b === 2)).toBe(true);
    expect(await fs.readdir(m.mnt)).toEqual([]);
    expect(await t!.ctx.store.moves.orphaned([])).toEqual([]);
    expect(await t!.ctx.store.staging.orphaned([])).toEqual([]);
  });
});
