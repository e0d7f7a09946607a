import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testExecSandbox } from './tools.js';
import type { ServerConfig } from '../src/config/types.js';
import { prepareCommand } from '../src/runner/command.js';
import { deniedCommand } from '../src/runner/deny-list.js';
import { MAX_WALKED_ENTRIES } from '../src/runner/link-sources.js';
import { deniedPathOption, deniedSuffix, namesByPrefix } from '../src/runner/path-options.js';
import { startProcess, type ProcessResult } from '../src/runner/process.js';
import { CommandRefused } from '../src/runner/refusal.js';
import type { StoredUser } from '../src/store/users.js';
import { startTestApp, USER_PASSWORD, type TestApp } from './helpers.js';
import { PERM } from './security-runner-helpers.js';

/**
 * Security catalogue, runner class, links: no command a user may run creates a
 * symbolic link, carries one to another depth, writes through one or reads through one. The
 * runner refuses creating links at all, because `ln -s TARGET LINK` resolves TARGET from LINK's
 * folder while the runner checks arguments from the working folder.
 */

const COMMANDS = [
  'ln',
  'cp',
  'mv',
  'grep',
  'cat',
  'diff',
  'find',
  'du',
  'ls',
  'chmod',
  'gzip',
  'unzip',
  'link',
];

type Outcome = { refused: string } | { lines: string[]; result: ProcessResult };

describe('runner and symbolic links', () => {
  let t: TestApp;
  let bob: StoredUser;
  let home: string;
  let secret: string;

  /** Runs `line` as bob from the virtual folder `dir`, the way the command socket does. */
  const run = async (line: string, dir = '/'): Promise<Outcome> => {
    let prepared;
    try {
      prepared = await prepareCommand(t.ctx, bob, dir, line);
    } catch (err) {
      if (err instanceof CommandRefused) return { refused: err.message };
      throw err;
    }
    const lines: string[] = [];
    let proc;
    try {
      proc = startProcess(prepared, (l) => lines.push(l));
    } finally {
      await prepared.release();
    }
    return { lines, result: await proc.done };
  };
  const refusal = async (line: string, dir = '/') => {
    const o = await run(line, dir);
    return 'refused' in o ? o.refused : `ran: ${JSON.stringify(o.lines)} ${o.result.exitCode}`;
  };
  const exists = (p: string) => {
    try {
      fs.lstatSync(p);
      return true;
    } catch {
      return false;
    }
  };
  /** Every entry below `dir` with its link target, to show that nothing changed. */
  const listing = (dir: string): string[] =>
    fs
      .readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .sort()
      .map((rel) => {
        const p = path.join(dir, rel);
        return fs.lstatSync(p).isSymbolicLink() ? `${rel} -> ${fs.readlinkSync(p)}` : rel;
      });

  beforeAll(async () => {
    t = await startTestApp({ disableExec: false } as Partial<ServerConfig>);
    bob = await t.createUser({
      username: 'bob',
      scope: '/users/bob',
      perm: {
        admin: false,
        execute: true,
        create: true,
        rename: true,
        modify: true,
        delete: true,
        share: true,
        download: true,
      },
      commands: COMMANDS,
    });
    home = await fsp.realpath(path.join(t.root, 'users/bob'));
    secret = path.join(t.outside, 'secret.txt');
  });

  beforeEach(async () => {
    for (const name of await fsp.readdir(home)) {
      await fsp.rm(path.join(home, name), { recursive: true, force: true });
    }
    await fsp.writeFile(secret, 'root:outside-secret\n');
    await fsp.mkdir(path.join(home, 'a/b/c/d/e/f'), { recursive: true });
    await fsp.mkdir(path.join(home, 'g'));
    await fsp.writeFile(path.join(home, 'note.txt'), 'root:inside\n');
    await fsp.writeFile(path.join(home, 'g/inside.txt'), 'root:inside too\n');
    // Links a local process may have left in the scope (the runner itself cannot make any).
    fs.symlinkSync(secret, path.join(home, 'g/shadow-link'));
    fs.symlinkSync('../../note.txt', path.join(home, 'a/b/rel'));
  });

  afterAll(() => t.close());

  describe('creating links', () => {
    it('refuses the reported ln -s from a deep folder, and creates nothing', async () => {
      const before = listing(home);
      expect(
        await refusal('ln -s ../../../../../etc/shadow ../../../../../../g/shadow', '/a/b/c/d/e/f'),
      ).toBe('Command not allowed: ln -s creates symbolic links.');
      expect(exists(path.join(home, 'g/shadow'))).toBe(false);
      expect(listing(home)).toEqual(before);
      // And so nothing is there for the grep of the report to read.
      const o = await run('grep -r root g');
      expect('lines' in o && o.lines.join('\n')).not.toMatch(/outside-secret/);
    });

    it.each([
      'ln -s note.txt inside-link',
      'ln -sf note.txt inside-link',
      'ln -fs note.txt inside-link',
      'ln -vsr note.txt inside-link',
      'ln --symbolic note.txt inside-link',
      'ln --sym note.txt inside-link',
      'ln -- -s note.txt',
      'cp -s note.txt inside-link',
      'cp -as note.txt inside-link',
      'cp --symbolic-link note.txt inside-link',
      'cp --symb note.txt inside-link',
    ])('refuses %s, even pointing inside', async (line) => {
      const before = listing(home);
      expect(await refusal(line)).toMatch(
        /^Command not allowed: (ln|cp) -(s|-symbolic|-symbolic-link) creates symbolic links\.$/,
      );
      expect(listing(home)).toEqual(before);
    });

    it('refuses ln -s even when an administrator lists ln in unsafeCommands', async () => {
      const settings = t.ctx.store.settings.get();
      await t.ctx.store.settings.save({ ...settings, unsafeCommands: ['ln'] });
      try {
        expect(await refusal('ln -s note.txt x')).toBe('Command not allowed: ln -s creates symbolic links.');
      } finally {
        await t.ctx.store.settings.save(settings);
      }
    });

    it('still makes hard links inside the scope, and refuses one to the outside', async () => {
      const o = await run('ln note.txt hard.txt');
      expect('result' in o && o.result.exitCode).toBe(0);
      expect(fs.statSync(path.join(home, 'hard.txt')).ino).toBe(fs.statSync(path.join(home, 'note.txt')).ino);
      expect(await refusal('ln ../outside x')).toBe(
        testExecSandbox() === 'bwrap'
          ? 'Command not allowed: the path "../outside" is outside your scope.'
          : 'Command not allowed: the path "../outside" goes up with "..": without the runner\'s sandbox (bubblewrap), a folder moved while the command runs would make it lead elsewhere.',
      );
      expect(await refusal(`ln ${secret} x`)).toMatch(/is outside your scope/);
      expect(exists(path.join(home, 'x'))).toBe(false);
    });

    it('refuses a hard link to a link, which would be a new link at another depth', async () => {
      const before = listing(home);
      expect(await refusal('ln a/b/rel top')).toBe(
        'Command not allowed: "a/b/rel" is or holds a symbolic link; ln would carry it elsewhere or read through it.',
      );
      expect(await refusal('link a/b/rel top')).toMatch(/"a\/b\/rel" is or holds a symbolic link; link /);
      expect(listing(home)).toEqual(before);
    });

    it.each([
      'unzip',
      '7z',
      'bsdtar',
      'tar',
      'cpio',
      'pax',
      'rsync',
      'lndir',
      'stow',
      'coreutils',
      'uudecode',
    ])('keeps %s, which can make links, on the deny list', (name) => {
      expect(deniedCommand(name)).toBeDefined();
    });

    it('refuses unzip, whose archives can hold links, even when allow-listed', async () => {
      expect(await refusal('unzip x.zip')).toMatch(/^Command not allowed: unzip extracts archives, /);
    });
  });

  describe('carrying links elsewhere', () => {
    it.each([
      ['mv a/b/rel rel', 'a/b/rel', ''],
      ['mv a moved', 'a', ' (/a/b/rel)'],
      ['cp -a a copy', 'a', ' (/a/b/rel)'],
      ['cp -r a copy', 'a', ' (/a/b/rel)'],
      ['cp -P a/b/rel rel', 'a/b/rel', ''],
      ['cp -d a/b/rel rel', 'a/b/rel', ''],
      ['cp -rt g a', 'a', ' (/a/b/rel)'],
      ['cp --target-directory=g -r a', 'a', ' (/a/b/rel)'],
      ['cp -r g copy', 'g', ' (/g/shadow-link)'],
      ['cp a/b/rel/ copy', 'a/b/rel/', ''],
    ])('refuses %s (a relative link moved to another depth)', async (line, operand, where) => {
      const before = listing(home);
      const command = line.split(' ')[0];
      expect(await refusal(line)).toBe(
        `Command not allowed: ${JSON.stringify(operand)} is or holds a symbolic link${where}; ${command} would carry it elsewhere or read through it.`,
      );
      expect(listing(home)).toEqual(before);
    });

    it('still copies and moves trees without links', async () => {
      const copy = await run('cp -a a/b/c copy');
      expect('result' in copy && copy.result.exitCode).toBe(0);
      expect(fs.statSync(path.join(home, 'copy/d/e/f')).isDirectory()).toBe(true);
      const move = await run('mv copy moved');
      expect('result' in move && move.result.exitCode).toBe(0);
      expect(exists(path.join(home, 'moved/d'))).toBe(true);
    });

    it('refuses a tree too big to check, instead of half checking it', async () => {
      const big = path.join(home, 'big');
      await fsp.mkdir(big);
      for (let i = 0; i < MAX_WALKED_ENTRIES; i++) fs.writeFileSync(path.join(big, `f${i}`), '');
      expect(await refusal('cp -r big big2')).toBe(
        `Command not allowed: cp would act on more than ${MAX_WALKED_ENTRIES} files, too many to check for symbolic links.`,
      );
      expect(exists(path.join(home, 'big2'))).toBe(false);
      // Ten thousand files made and walked: minutes on a busy machine, a bound on a hang only.
    }, 180_000);
  });

  describe('writing through links', () => {
    it('refuses cp into a folder where a link stands at the name it would write', async () => {
      fs.symlinkSync(secret, path.join(home, 'g/note.txt'));
      expect(await refusal('cp note.txt g')).toBe(
        'Command not allowed: cp would write through the symbolic link /g/note.txt.',
      );
      expect(await refusal('cp -t g note.txt')).toMatch(/write through the symbolic link \/g\/note\.txt/);
      expect(fs.readFileSync(secret, 'utf8')).toBe('root:outside-secret\n');
    });

    it('refuses cp -r merging into a folder whose sub-folder is a link', async () => {
      await fsp.mkdir(path.join(home, 'src/sub'), { recursive: true });
      await fsp.writeFile(path.join(home, 'src/sub/x'), 'x');
      await fsp.mkdir(path.join(home, 'dst/src'), { recursive: true });
      fs.symlinkSync(t.outside, path.join(home, 'dst/src/sub'));
      expect(await refusal('cp -r src dst')).toBe(
        'Command not allowed: cp would write through the symbolic link /dst/src/sub.',
      );
      expect(exists(path.join(t.outside, 'x'))).toBe(false);
    });
  });

  describe('reading through links', () => {
    it('refuses an argument that is a link to the outside', async () => {
      expect(await refusal('cat g/shadow-link')).toBe(
        'Command not allowed: the path "g/shadow-link" is outside your scope.',
      );
    });

    it.each([
      'grep -R root g',
      'grep -rR root g',
      'grep -Rl root .',
      'grep --dereference-recursive root g',
      'grep --derefer root g',
      'find -L g',
      'find g -follow',
      'find -H g',
      'du -L g',
      'du --dereference g',
      'ls -lL g',
      'ls --dereference g',
      'chmod -R -L 600 g',
      'chmod -RH 600 g',
      'gzip -rf g',
      'cp -L note.txt x',
      'cp -rH a x',
    ])('refuses %s', async (line) => {
      expect(await refusal(line)).toMatch(
        /^Command not allowed: \S+ \S+ follows symbolic links while walking folders\.$/,
      );
    });

    it('refuses the options of other tools that follow links or read file names from a file', () => {
      expect(deniedPathOption(['rg'], ['--follow', 'x'])).toBe(
        'rg --follow follows symbolic links while walking folders',
      );
      expect(deniedPathOption(['rg'], ['-L', 'x'])).toMatch(/^rg -L /);
      expect(deniedPathOption(['tree'], ['-l'])).toMatch(/^tree -l /);
      expect(deniedPathOption(['tree'], ['-L', '2'])).toBeUndefined();
      expect(deniedPathOption(['ag'], ['-f', 'x'])).toMatch(/^ag -f /);
      expect(deniedPathOption(['zstd'], ['-r', 'd'])).toMatch(/^zstd -r /);
      expect(deniedPathOption(['chown'], ['--dereference', 'u', 'f'])).toMatch(/^chown --dereference /);
      expect(deniedPathOption(['gcp'], ['-L', 'a', 'b'])).toMatch(/^gcp -L /);
      // The real name of the program counts as well as the name typed.
      expect(deniedPathOption(['mygrep', 'grep'], ['-R', 'x'])).toMatch(/^grep -R /);
      expect(deniedPathOption(['sort'], ['--files0-from=list'])).toMatch(/reads the names of the files/);
      expect(deniedPathOption(['find'], ['-files0-from', 'list'])).toMatch(/reads the names of the files/);
      expect(deniedPathOption(['sha256sum'], ['-c', 'sums'])).toMatch(/reads the names of the files/);
      expect(deniedPathOption(['file'], ['--files-from', 'list'])).toMatch(/reads the names of the files/);
      for (const [tool, arg] of [
        ['xz', '--files=list'],
        ['xz', '--files0=list'],
        ['unxz', '--fil=list'],
        ['zstd', '--filelist=list'],
        ['zstd', '--filel', 'list'],
        ['unzstd', '--filelist=list'],
      ] as const) {
        expect(deniedPathOption([tool], [arg]), `${tool} ${arg}`).toMatch(/reads the names of the files/);
      }
      // Pieces named by a prefix and a suffix: the suffix may not lead into folders.
      expect(deniedSuffix(['csplit'], ['-f', 'x', '-b', '2/sub/keys%.0d', 'src', '2'])).toMatch(
        /^csplit -b with a "\/" writes into folders/,
      );
      expect(deniedSuffix(['csplit'], ['-kb2/sub%d', 'src', '2'])).toMatch(/^csplit -b /);
      expect(deniedSuffix(['csplit'], ['--suffix=/x%d', 'src', '2'])).toMatch(/^csplit --suffix-format /);
      expect(deniedSuffix(['split'], ['--additional-suffix=/../x', 'src'])).toMatch(
        /^split --additional-suffix /,
      );
      expect(deniedSuffix(['csplit'], ['-b', '%02d.txt', 'src', '2'])).toBeUndefined();
      // Names cut or built with a suffix: gunzip's output, a backup of mv, cp, ln, install.
      expect(deniedSuffix(['gunzip'], ['-k', '-S', 'e/zz', 'zz'])).toMatch(/^gunzip -S /);
      expect(deniedSuffix(['gzip'], ['--suffix=/x', 'f'])).toMatch(/^gzip --suffix /);
      expect(deniedSuffix(['mv'], ['-b', '-S', 'x/y', '-T', 'sub', 'dst'])).toMatch(/^mv -S /);
      expect(deniedSuffix(['cp'], ['--backup', '--suffix=../x', 'a', 'b'])).toMatch(/^cp --suffix /);
      expect(deniedSuffix(['gunzip'], ['-S', '.gzip', 'f.gzip'])).toBeUndefined();
      expect(namesByPrefix(['mv'], ['-b', '-S', '.moved', '-T', 'sub', 'dst'])).toBe(true);
      expect(namesByPrefix(['mv'], ['a', 'b'])).toBe(false);
      expect(namesByPrefix(['split'], [])).toBe(true);
      expect(deniedSuffix(['split'], ['-l', '1', 'logs/src', 'out/part_'])).toBeUndefined();
      expect(deniedPathOption(['cp'], ['--parents', '../../x', 'd'])).toMatch(
        /^cp --parents writes into folders/,
      );
      expect(deniedPathOption(['vdir'], ['-L'])).toMatch(/^vdir -L /);
      expect(deniedPathOption(['install'], ['-l', 's', 'a', 'b'])).toBe('install -l creates symbolic links');
      // What stays allowed.
      expect(deniedPathOption(['grep'], ['-rn', 'x', '.'])).toBeUndefined();
      expect(deniedPathOption(['du'], ['--dereference-args', '-sh', 'x'])).toBeUndefined();
      expect(deniedPathOption(['ls'], ['-laH'])).toBeUndefined();
      expect(deniedPathOption(['cp'], ['--no-dereference', '-p', 'a', 'b'])).toBeUndefined();
      expect(deniedPathOption(['find'], ['.', '-name', '*.L', '-type', 'l'])).toBeUndefined();
    });

    it('grep -r over a folder holding a link to the outside prints nothing from the outside', async () => {
      const o = await run('grep -r root g');
      expect('lines' in o).toBe(true);
      if (!('lines' in o)) return;
      expect(o.lines).toEqual(['g/inside.txt:root:inside too']);
      expect(o.result.exitCode).toBe(0);
    });

    it('refuses diff over folders holding a link, which diff follows', async () => {
      await fsp.mkdir(path.join(home, 'h'));
      await fsp.writeFile(path.join(home, 'h/shadow-link'), 'x\n');
      expect(await refusal('diff -r g h')).toBe(
        'Command not allowed: "g" is or holds a symbolic link (/g/shadow-link); diff would carry it elsewhere or read through it.',
      );
      expect(await refusal('diff h --from-file=g')).toMatch(/"g" is or holds a symbolic link/);
      const o = await run('diff -r a/b/c h');
      expect('result' in o && o.result.exitCode).toBe(1);
    });
  });
});

describe('runner and WebDAV locks', () => {
  it('runs no command while another user holds a lock inside the scope; the user’s own locks do not stop it', async () => {
    const t = await startTestApp({ disableExec: false } as Partial<ServerConfig>);
    try {
      const perm = PERM;
      const ann = await t.createUser({ username: 'ann', scope: '/team', perm, commands: ['rm'] });
      const bob = await t.createUser({ username: 'bob', scope: '/team', perm, commands: ['rm'] });
      const team = path.join(t.root, 'team');
      await fsp.mkdir(path.join(team, 'docs'), { recursive: true });
      await fsp.writeFile(path.join(team, 'docs', 'plan.txt'), 'ann is editing this\n');
      const locked = await t.app.inject({
        method: 'LOCK',
        url: '/dav/docs/plan.txt',
        headers: {
          authorization: 'Basic ' + Buffer.from(`ann:${USER_PASSWORD}`).toString('base64'),
          depth: '0',
          timeout: 'Second-600',
          'content-type': 'application/xml',
        },
        payload:
          '<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>ann</D:owner></D:lockinfo>',
      });
      expect(locked.statusCode, locked.body).toBe(200);

      // An API DELETE by bob answers 423; a command could remove it all the same, so none runs.
      await expect(prepareCommand(t.ctx, bob, '/docs', 'rm plan.txt')).rejects.toThrow(
        /^Command not allowed: .*lock/,
      );
      expect(await fsp.readFile(path.join(team, 'docs', 'plan.txt'), 'utf8')).toBe('ann is editing this\n');
      // The holder's own lock is hers to write past.
      const own = await prepareCommand(t.ctx, ann, '/docs', 'rm plan.txt');
      await own.release();
    } finally {
      await t.close();
    }
  });
});
