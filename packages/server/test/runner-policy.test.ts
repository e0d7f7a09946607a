import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../src/config/defaults.js';
import type { ServerConfig } from '../src/config/types.js';
import { pathCandidates } from '../src/runner/arguments.js';
import { checkNotRunner } from '../src/runner/command.js';
import { deniedCommand, deniedOption } from '../src/runner/deny-list.js';
import { findExecutable } from '../src/runner/executable.js';
import { cleanUnsafeCommands, runnerOptions, unsafeCommandProblem } from '../src/runner/options.js';
import { CommandRefused } from '../src/runner/refusal.js';
import { defaultSettings, normaliseSettings } from '../src/store/settings.js';

describe('deny list', () => {
  it.each([
    'sh',
    'bash',
    'dash',
    'zsh',
    'env',
    'xargs',
    'sudo',
    'su',
    'nohup',
    'timeout',
    'nice',
    'python',
    'python3',
    'python3.12',
    'perl',
    'node',
    'awk',
    'gawk',
    'sed',
    'busybox',
    'git',
    'make',
    'tar',
    'vim.basic',
  ])('refuses %s', (name) => {
    expect(deniedCommand(name)).toMatch(new RegExp(`^${name.replace('.', '\\.')} `));
  });

  it.each([
    'ls',
    'cat',
    'echo',
    'du',
    'df',
    'grep',
    'head',
    'tail',
    'wc',
    'find',
    'sort',
    'stat',
    'sum',
    'nl',
  ])('lets %s through', (name) => {
    expect(deniedCommand(name)).toBeUndefined();
  });

  it('refuses the options that make a tool run commands', () => {
    expect(deniedOption('find', ['.', '-exec', 'id', ';'])).toBe('find -exec runs other commands');
    expect(deniedOption('find', ['.', '-execdir', 'id', ';'])).toBe('find -execdir runs other commands');
    expect(deniedOption('find', ['.', '-ok', 'id', ';'])).toBe('find -ok runs other commands');
    expect(deniedOption('find', ['.', '-okdir', 'id', ';'])).toBe('find -okdir runs other commands');
    expect(deniedOption('find', ['.', '-delete'])).toMatch(/^find -delete /);
    expect(deniedOption('find', ['.', '-name', '*.txt', '-print'])).toBeUndefined();
    expect(deniedOption('sort', ['--compress-program=sh', 'f'])).toMatch(/compress-program/);
    // getopt accepts unambiguous abbreviations of long options.
    expect(deniedOption('sort', ['--compress-p', 'sh'])).toMatch(/compress-program/);
    expect(deniedOption('sort', ['--check', 'f'])).toBeUndefined();
    expect(deniedOption('split', ['--filter=sh', 'f'])).toMatch(/--filter/);
    expect(deniedOption('rg', ['--pre=sh', 'x'])).toMatch(/--pre/);
    expect(deniedOption('rg', ['--pre-glob=*.x', 'x'])).toBeUndefined();
  });

  describe('by the real program behind a name', () => {
    let dir: string;
    const opts = (unsafe: string[] = []) => ({
      path: [],
      pathEnv: '',
      timeLimitMs: 1000,
      outputLimit: 1000,
      unsafeCommands: unsafe,
    });
    beforeAll(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-policy-'));
      await fs.writeFile(path.join(dir, 'bash'), '#!/bin/sh\n', { mode: 0o755 });
      await fs.symlink(path.join(dir, 'bash'), path.join(dir, 'll'));
      await fs.writeFile(path.join(dir, 'busybox'), '#!/bin/sh\n', { mode: 0o755 });
      await fs.symlink(path.join(dir, 'busybox'), path.join(dir, 'ls'));
    });
    afterAll(() => fs.rm(dir, { recursive: true, force: true }));

    it('refuses an innocent name that links to a shell', async () => {
      const exe = (await findExecutable('ll', [dir]))!;
      expect(exe.real).toBe(await fs.realpath(path.join(dir, 'bash')));
      expect(() => checkNotRunner('ll', [], exe, opts())).toThrow(CommandRefused);
      expect(() => checkNotRunner('ll', [], exe, opts(['ll']))).not.toThrow();
    });

    it('lets a multi-call binary act as the allowed applet', async () => {
      const exe = (await findExecutable('ls', [dir]))!;
      expect(() => checkNotRunner('ls', [], exe, opts())).not.toThrow();
    });
  });
});

describe('findExecutable', () => {
  it('finds bare names on absolute PATH folders only', async () => {
    expect((await findExecutable('ls', ['/usr/bin', '/bin']))?.path).toMatch(/\/ls$/);
    expect(await findExecutable('ls', ['bin', 'usr/bin'])).toBeUndefined();
    expect(await findExecutable('/bin/ls', ['/usr/bin', '/bin'])).toBeUndefined();
    expect(await findExecutable('..', ['/usr/bin'])).toBeUndefined();
    expect(await findExecutable('no-such-program-here', ['/usr/bin', '/bin'])).toBeUndefined();
  });
});

describe('runnerOptions', () => {
  it('has safe defaults', () => {
    const o = runnerOptions(defaultConfig(), defaultSettings());
    expect(o).toEqual({
      path: ['/usr/local/bin', '/usr/bin', '/bin'],
      pathEnv: '/usr/local/bin:/usr/bin:/bin',
      timeLimitMs: 60_000,
      outputLimit: 1024 * 1024,
      unsafeCommands: [],
    });
  });

  it('drops relative PATH entries and reads the unsafeCommands setting', () => {
    const config = {
      ...defaultConfig(),
      execPath: '.:bin:/opt/tools::/bin',
      execTimeLimit: 5,
    } as ServerConfig;
    const o = runnerOptions(config, { ...defaultSettings(), unsafeCommands: ['find'] });
    expect(o.path).toEqual(['/opt/tools', '/bin']);
    expect(o.timeLimitMs).toBe(5000);
    expect(o.unsafeCommands).toEqual(['find']);
  });
});

describe('unsafeCommands entries', () => {
  const fail = (message: string) => new Error(message);
  it('are bare command names, trimmed and deduplicated', () => {
    expect(cleanUnsafeCommands([' find', 'env', 'find ', 'python3'], fail)).toEqual([
      'find',
      'env',
      'python3',
    ]);
    expect(cleanUnsafeCommands([], fail)).toEqual([]);
  });

  it.each([
    ['', 'an entry of unsafeCommands is empty'],
    ['/usr/bin/env', 'unsafeCommands entry "/usr/bin/env" must be a bare command name, not a path'],
    ['..', 'unsafeCommands entry ".." must be a bare command name, not a path'],
    ['find -exec', 'unsafeCommands entry "find -exec" must be one command name, without blanks'],
  ])('refuse %j', (entry, message) => {
    expect(unsafeCommandProblem(entry.trim())).toBe(message);
    expect(() => cleanUnsafeCommands([entry], fail)).toThrow(message);
  });

  it('are read from records saved before the setting existed as an empty list', () => {
    const { unsafeCommands: _dropped, ...old } = defaultSettings();
    expect(normaliseSettings(old).unsafeCommands).toEqual([]);
    expect(
      normaliseSettings({ ...old, unsafeCommands: ['env', 3] as unknown as string[] }).unsafeCommands,
    ).toEqual(['env']);
  });
});

describe('pathCandidates', () => {
  it('takes plain arguments whole', () => {
    expect(pathCandidates('a/b')).toEqual(['a/b']);
    expect(pathCandidates('/etc/passwd')).toEqual(['/etc/passwd']);
    expect(pathCandidates('-')).toEqual([]);
    expect(pathCandidates('--')).toEqual([]);
  });

  it('finds paths glued to short options', () => {
    expect(pathCandidates('-o/etc/x')).toEqual(['/etc/x']);
    expect(pathCandidates('-xvf../a')).toEqual(['vf../a', 'f../a', '../a']);
    expect(pathCandidates('-o/srv/a/b')).toEqual(['/srv/a/b']);
    expect(pathCandidates('-la')).toEqual(['a']);
  });

  it('finds paths after =, :, @ and ,', () => {
    expect(pathCandidates('--output=/etc/x')).toEqual(['/etc/x']);
    expect(pathCandidates('if=/etc/passwd')).toEqual(['if=/etc/passwd', '/etc/passwd']);
    expect(pathCandidates('@/etc/passwd')).toEqual(['@/etc/passwd', '/etc/passwd']);
    expect(pathCandidates('file:///etc/passwd')).toEqual(['file:///etc/passwd', '///etc/passwd']);
    expect(pathCandidates('-Wl,/x')).toEqual(['l,/x', ',/x', '/x']);
  });

  it('leaves the path of a remote URL alone', () => {
    expect(pathCandidates('https://example.com/etc/passwd')).toEqual(['https://example.com/etc/passwd']);
  });
});
