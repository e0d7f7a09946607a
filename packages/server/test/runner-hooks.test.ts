import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../src/config/types.js';
import { defaultConfig } from '../src/config/defaults.js';
import { AppError } from '../src/errors.js';
import { hookArguments, runHooks } from '../src/runner/hooks.js';
import type { StoredSettings } from '../src/store/settings.js';
import type { StoredUser } from '../src/store/users.js';
import { startTestApp, type TestApp } from './helpers.js';

/** Test-only hook programs, in a PATH folder of their own. They write into their working folder (HOME). */
const HELPERS: Record<string, string> = {
  record: [
    'out=hook-record.txt',
    'for a in "$@"; do printf "arg=%s\\n" "$a" >> "$out"; done',
    'printf "env FILE=%s\\n" "$FILE" >> "$out"',
    'printf "env DESTINATION=%s\\n" "$DESTINATION" >> "$out"',
    'printf "env SCOPE=%s\\n" "$SCOPE" >> "$out"',
    'printf "env TRIGGER=%s\\n" "$TRIGGER" >> "$out"',
    'printf "env USERNAME=%s\\n" "$USERNAME" >> "$out"',
    'printf "env HOME=%s\\n" "$HOME" >> "$out"',
    'printf "pwd=%s\\n" "$(pwd)" >> "$out"',
  ].join('\n'),
  refuse: 'echo "quota exceeded" >&2; exit 3',
  slowtouch: 'sleep 1; touch slow-done',
  // Prints its environment's names, to show nothing of the server leaks.
  envnames: 'env | cut -d= -f1 | sort > env-names.txt',
};

describe('event hooks', () => {
  let t: TestApp;
  let bin: string;
  let bob: StoredUser;
  let home: string;
  const config = () => t.ctx.config as ServerConfig;

  const setHooks = async (commands: Record<string, string[]>, shell: string[] = []) => {
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      shell,
      commands: { ...s.commands, ...commands },
    } as StoredSettings);
  };
  const record = async () => {
    try {
      return (await fs.readFile(path.join(home, 'hook-record.txt'), 'utf8')).trimEnd().split('\n');
    } catch {
      return undefined;
    }
  };

  beforeAll(async () => {
    bin = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-hooks-bin-'));
    for (const [name, body] of Object.entries(HELPERS)) {
      await fs.writeFile(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
    }
    t = await startTestApp({ disableExec: false, execPath: `${bin}:/usr/bin:/bin` } as Partial<ServerConfig>);
    bob = await t.createUser({ username: 'bob', scope: '/users/bob' });
    home = await fs.realpath(path.join(t.root, 'users/bob'));
  });

  afterAll(async () => {
    await t.close();
    await fs.rm(bin, { recursive: true, force: true });
  });

  beforeEach(async () => {
    config().disableExec = false;
    config().execTimeLimit = defaultConfig().execTimeLimit;
    const s = t.ctx.store.settings.get();
    await t.ctx.store.settings.save({
      ...s,
      shell: [],
      commands: Object.fromEntries(Object.keys(s.commands).map((k) => [k, []])),
    });
    await fs.rm(home, { recursive: true, force: true });
    await fs.mkdir(home, { recursive: true });
  });

  it('substitutes variables as whole words only, and exports them', async () => {
    const file = path.join(home, 'a b.txt');
    await setHooks({
      before_copy: [
        `record $FILE x$FILE \${FILE} '$FILE' "$FILE" \\$FILE $DESTINATION $SCOPE $TRIGGER $USERNAME $HOME $OTHER`,
      ],
    });
    const report = await runHooks(t.ctx, bob, 'copy', 'before', { file, destination: path.join(home, 'c') });
    expect(report.warnings).toEqual([]);
    expect(await record()).toEqual([
      `arg=${file}`,
      'arg=x$FILE',
      `arg=${file}`,
      'arg=$FILE',
      `arg=${file}`,
      'arg=$FILE',
      `arg=${path.join(home, 'c')}`,
      'arg=/users/bob',
      'arg=before_copy',
      'arg=bob',
      'arg=$HOME',
      'arg=$OTHER',
      `env FILE=${file}`,
      `env DESTINATION=${path.join(home, 'c')}`,
      'env SCOPE=/users/bob',
      'env TRIGGER=before_copy',
      'env USERNAME=bob',
      `env HOME=${home}`,
      `pwd=${home}`,
    ]);
  });

  it('gives DESTINATION the scope folder when the event has none', async () => {
    await setHooks({ after_delete: ['record $DESTINATION'] });
    await runHooks(t.ctx, bob, 'delete', 'after', { file: path.join(home, 'gone') });
    expect((await record())?.[0]).toBe(`arg=${home}`);
  });

  it('keeps the environment minimal', async () => {
    await setHooks({ after_save: ['envnames'] });
    await runHooks(t.ctx, bob, 'save', 'after', { file: path.join(home, 'x') });
    const names = (await fs.readFile(path.join(home, 'env-names.txt'), 'utf8')).trim().split('\n');
    // sh adds PWD (and some shells SHLVL, _); nothing of the server's own environment arrives.
    const expected = ['DESTINATION', 'FILE', 'HOME', 'LANG', 'PATH', 'SCOPE', 'TRIGGER', 'USERNAME'];
    expect(names.filter((n) => !['PWD', 'SHLVL', '_', 'OLDPWD'].includes(n))).toEqual(expected);
  });

  describe('a file named $(touch /tmp/pwned-…) creates nothing', () => {
    let marker: string;
    let file: string;
    beforeEach(async () => {
      marker = path.join(os.tmpdir(), `pwned-${crypto.randomUUID()}`);
      // A name cannot hold "/": the hostile text spans folders, as it would in a real upload path.
      file = path.join(home, `$(touch ${marker})`, `\`touch ${marker}\`;touch ${marker}`);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, 'x');
    });

    it('without a shell: the name is one argument', async () => {
      await setHooks({ after_upload: ['record $FILE', 'record "$FILE" ${FILE}'] });
      const report = await runHooks(t.ctx, bob, 'upload', 'after', { file });
      expect(report.warnings).toEqual([]);
      expect((await record())?.filter((l) => l.startsWith('arg='))).toEqual([
        `arg=${file}`,
        `arg=${file}`,
        `arg=${file}`,
      ]);
      await expect(fs.stat(marker)).rejects.toThrow();
    });

    it('with settings.shell: the name reaches the shell as data in the environment', async () => {
      await setHooks(
        {
          before_upload: [
            'echo $FILE > shell-1.txt',
            'echo "$FILE" > shell-2.txt',
            'echo ${FILE} && ls "$FILE" > shell-3.txt',
          ],
        },
        ['sh', '-c'],
      );
      await runHooks(t.ctx, bob, 'upload', 'before', { file });
      expect((await fs.readFile(path.join(home, 'shell-2.txt'), 'utf8')).trim()).toBe(file);
      expect((await fs.readFile(path.join(home, 'shell-3.txt'), 'utf8')).trim()).toBe(file);
      await expect(fs.stat(marker)).rejects.toThrow();
    });
  });

  it('aborts with a clear 403 when a blocking before-hook fails', async () => {
    await setHooks({ before_upload: ['refuse'] });
    const err = await runHooks(t.ctx, bob, 'upload', 'before', { file: path.join(home, 'x') }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(AppError);
    expect(err.status).toBe(403);
    expect(err.message).toBe('the before_upload hook refused the operation (exit status 3)');
  });

  it('stops at the first failing before-hook', async () => {
    await setHooks({ before_rename: ['refuse', 'record never'] });
    await expect(runHooks(t.ctx, bob, 'rename', 'before', { file: path.join(home, 'x') })).rejects.toThrow(
      /refused/,
    );
    expect(await record()).toBeUndefined();
  });

  it('aborts with 500 when a before-hook cannot run or runs out of time', async () => {
    await setHooks({ before_save: ['no-such-program $FILE'] });
    const missing = await runHooks(t.ctx, bob, 'save', 'before', { file: path.join(home, 'x') }).catch(
      (e) => e,
    );
    expect(missing).toMatchObject({ status: 500 });
    config().execTimeLimit = 1;
    await setHooks({ before_save: ['sleep 5'] });
    const started = Date.now();
    const slow = await runHooks(t.ctx, bob, 'save', 'before', { file: path.join(home, 'x') }).catch((e) => e);
    expect(slow).toMatchObject({
      status: 500,
      message: 'the before_save hook failed (time limit of 1 s reached)',
    });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('reports a failing after-hook as a warning and does not throw', async () => {
    await setHooks({ after_save: ['refuse', 'record still-runs'] });
    const report = await runHooks(t.ctx, bob, 'save', 'after', { file: path.join(home, 'x') });
    expect(report.warnings).toEqual(['the after_save hook failed (exit status 3)']);
    expect((await record())?.[0]).toBe('arg=still-runs');
  });

  it('does not wait for a hook ending in &, and its failure never aborts', async () => {
    await setHooks({ before_delete: ['slowtouch &', 'refuse &'] });
    const started = Date.now();
    await expect(runHooks(t.ctx, bob, 'delete', 'before', { file: path.join(home, 'x') })).resolves.toEqual({
      warnings: [],
    });
    expect(Date.now() - started).toBeLessThan(900);
    await expect(fs.stat(path.join(home, 'slow-done'))).rejects.toThrow();
    const end = Date.now() + 5000;
    while (Date.now() < end) {
      if (await fs.stat(path.join(home, 'slow-done')).catch(() => undefined)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await expect(fs.stat(path.join(home, 'slow-done'))).resolves.toBeTruthy();
  });

  it('runs nothing when exec is disabled', async () => {
    config().disableExec = true;
    await setHooks({ before_upload: ['refuse'], after_upload: ['record x'] });
    await expect(runHooks(t.ctx, bob, 'upload', 'before', { file: path.join(home, 'x') })).resolves.toEqual({
      warnings: [],
    });
    await runHooks(t.ctx, bob, 'upload', 'after', { file: path.join(home, 'x') });
    expect(await record()).toBeUndefined();
  });

  it('runs nothing for events without hooks', async () => {
    await expect(runHooks(t.ctx, bob, 'copy', 'after', { file: path.join(home, 'x') })).resolves.toEqual({
      warnings: [],
    });
  });

  it('splits hook commands like the runner, with whole-word substitution', () => {
    const vars = { FILE: '/r/a b', DESTINATION: '/r', SCOPE: '/', TRIGGER: 'after_save', USERNAME: 'u' };
    expect(hookArguments('cp $FILE "${DESTINATION}" $FILE.bak a;b', vars)).toEqual([
      'cp',
      '/r/a b',
      '/r',
      '$FILE.bak',
      'a;b',
    ]);
  });
});
