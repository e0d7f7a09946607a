import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  useCommandServer,
  run,
  s,
  bob,
  setBob,
  bobToken,
  bobDir,
  login,
  as,
  setCommands,
  saveSettings,
} from './command-websocket-helpers.js';

/**
 * The command WebSocket before and after the upgrade: credentials and origin, permission before
 * any message is read, the allow-list, and no shell. Paths, messages and the process are in
 * command-websocket-process.test.ts.
 */
describe('command websocket', () => {
  useCommandServer();

  describe('before the upgrade', () => {
    it('refuses an unauthenticated upgrade with 401', async () => {
      expect((await run(`${s.url}/api/command/`, 'echo hi')).status).toBe(401);
      expect((await run(`${s.url}/api/command/`, 'echo hi', { headers: { 'x-auth': 'a.b.c' } })).status).toBe(
        401,
      );
    });

    it('refuses a cross-origin upgrade with 403, and accepts the same origin', async () => {
      const cross = await run(`${s.url}/api/command/`, 'echo hi', {
        ...as(bobToken),
        origin: 'http://evil.example',
      });
      expect(cross.status).toBe(403);
      const same = await run(`${s.url}/api/command/`, 'echo hi', {
        ...as(bobToken),
        origin: `http://127.0.0.1:${s.port}`,
      });
      expect(same).toMatchObject({ lines: ['hi'], code: 1000 });
    });

    it('accepts the auth cookie, as browsers send it', async () => {
      const r = await run(`${s.url}/api/command`, 'echo cookie', { headers: { cookie: `auth=${bobToken}` } });
      expect(r).toMatchObject({ lines: ['cookie'], code: 1000 });
    });

    it('answers a plain GET (no upgrade) with 404', async () => {
      const res = await s.app.inject({ method: 'GET', url: '/api/command/', ...as(bobToken) });
      expect(res.statusCode).toBe(404);
    });
  });

  describe('permission, checked before any message is read', () => {
    it('refuses everyone when exec is disabled', async () => {
      s.ctx.config.disableExec = true;
      const r = await run(`${s.url}/api/command/`, undefined, as(bobToken));
      expect(r.lines).toEqual(['Command not allowed.']);
      expect(r.code).toBe(1008);
    });

    it('runs no command line that comes after its session ended', async () => {
      const token = await login('bob');
      const { sid, user } = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as {
        sid: string;
        user: { id: number };
      };
      const ws = new WebSocket(`${s.url}/api/command/`, { headers: { 'x-auth': token } });
      const lines: string[] = [];
      const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
      ws.on('message', (data) => lines.push((data as Buffer).toString('utf8')));
      // The socket is open (authenticated); the session ends before the command line is sent.
      await new Promise((resolve) => ws.on('open', resolve));
      await s.ctx.auth.logout(sid, user.id);
      ws.send('echo still here');
      expect(await closed).toBe(1008);
      expect(lines).toEqual(['Command not allowed: the session it was started in has ended.']);
    });

    it('refuses a user without the execute permission', async () => {
      setBob(
        await s.store.users.update({
          ...(await s.store.users.get(bob.id))!,
          perm: { ...bob.perm, execute: false },
        }),
      );
      try {
        const r = await run(`${s.url}/api/command/`, undefined, as(bobToken));
        expect(r.lines).toEqual(['Command not allowed.']);
      } finally {
        setBob(
          await s.store.users.update({
            ...(await s.store.users.get(bob.id))!,
            perm: { ...bob.perm, execute: true },
          }),
        );
      }
    });

    it('refuses a user with an empty allow-list', async () => {
      await setCommands([]);
      const r = await run(`${s.url}/api/command/`, undefined, as(bobToken));
      expect(r.lines).toEqual(['Command not allowed.']);
    });
  });

  describe('the allow-list', () => {
    it('refuses a command that is not on it', async () => {
      const r = await run(`${s.url}/api/command/`, 'rm hello.txt', as(bobToken));
      expect(r).toMatchObject({ lines: ['Command not allowed.'], code: 1008 });
      await expect(fs.stat(path.join(bobDir, 'hello.txt'))).resolves.toBeTruthy();
    });

    it('matches the first word exactly: no prefix, no path, no case folding', async () => {
      await setCommands(['ec', '/bin/echo', 'ECHO']);
      for (const line of ['echo x', '/bin/echo x', 'ECH x', './echo x']) {
        expect((await run(`${s.url}/api/command/`, line, as(bobToken))).lines).toEqual([
          'Command not allowed.',
        ]);
      }
    });

    it('refuses commands that run other commands even when allow-listed', async () => {
      await setCommands(['xargs', 'env', 'sh', 'bash', 'timeout', 'nice', 'python3', 'awk', 'sed']);
      for (const line of [
        'xargs touch',
        'env',
        'sh -c id',
        'bash',
        'timeout 1 id',
        'nice id',
        'python3',
        'awk 1',
        'sed 1p',
      ]) {
        const r = await run(`${s.url}/api/command/`, line, as(bobToken));
        expect(r.lines[0], line).toMatch(/^Command not allowed: .* unsafeCommands setting\.$/);
        expect(r.code).toBe(1008);
      }
    });

    it('refuses wrappers, setuid programs and arguments that name a shell or an interpreter', async () => {
      await setCommands(['sg', 'newgrp', 'setarch', 'choom', 'echo']);
      for (const [line, why] of [
        ['sg root -c id', /^Command not allowed: sg runs another program/],
        ['newgrp', /^Command not allowed: newgrp runs another program/],
        ['setarch x86_64 id', /^Command not allowed: setarch runs another program/],
        ['choom -n 0 -- id', /^Command not allowed: choom runs another program/],
        ['echo sh', /^Command not allowed: the argument "sh" names a shell or an interpreter/],
        ['echo --with=python3.12', /^Command not allowed: the argument "--with=python3.12" names a shell/],
      ] as const) {
        const r = await run(`${s.url}/api/command/`, line, as(bobToken));
        expect(r.lines[0], line).toMatch(why);
        expect(r.code).toBe(1008);
      }
      const ok = await run(`${s.url}/api/command/`, 'echo python_notes shell', as(bobToken));
      expect(ok).toMatchObject({ lines: ['python_notes shell'], code: 1000 });

      // A setuid program the deny list does not name is refused by its mode.
      await fs.copyFile('/bin/echo', path.join(s.bin, 'suid-echo'));
      await fs.chmod(path.join(s.bin, 'suid-echo'), 0o4755);
      await setCommands(['suid-echo']);
      const setuid = await run(`${s.url}/api/command/`, 'suid-echo hi', as(bobToken));
      expect(setuid.lines[0]).toMatch(/^Command not allowed: suid-echo runs with the rights of its owner/);
    });

    it('runs from the system’s folders only the simple tools it knows, and never makes a setuid file', async () => {
      await setCommands(['tty', 'chmod', 'install', 'mkdir']);
      const tty = await run(`${s.url}/api/command/`, 'tty', as(bobToken));
      expect(tty.lines[0]).toMatch(
        /^Command not allowed: tty is not one of the simple tools the runner runs/,
      );
      for (const line of [
        'chmod 4755 hello.txt',
        'chmod u+s hello.txt',
        'chmod o-w,g+s hello.txt',
        'mkdir -m2755 d',
        'install --mode=6755 hello.txt h2',
        // getopt's clusters and abbreviations, and a mode as the next word.
        'install -Dm4755 hello.txt s1',
        'install -pm4755 hello.txt s3',
        'install --mo=4755 hello.txt s2',
        'install --mode 4755 hello.txt s4',
        'install -m u+s hello.txt s5',
        'mkdir -pm2755 d1',
        // An operator before octal digits is octal too.
        'chmod =4755 hello.txt',
        'install -m =4755 hello.txt s6',
        'install -m +6000 hello.txt s7',
        'install --mode=+4000 hello.txt s8',
        'mkdir -m +2000 d2',
        'chmod u=rwx,+4000 hello.txt',
      ]) {
        const r = await run(`${s.url}/api/command/`, line, as(bobToken));
        expect(r.lines[0], line).toMatch(/would make a setuid or setgid file\.$/);
        expect(r.code).toBe(1008);
      }
      const reference = await run(`${s.url}/api/command/`, 'chmod --reference=other hello.txt', as(bobToken));
      expect(reference.lines[0]).toMatch(
        /copies the mode of another file, setuid or setgid bits included\.$/,
      );
      expect(await fs.readdir(bobDir)).not.toContain('s1');
      expect(await run(`${s.url}/api/command/`, 'chmod 640 hello.txt', as(bobToken))).toMatchObject({
        code: 1000,
      });
      expect((await fs.stat(path.join(bobDir, 'hello.txt'))).mode & 0o7777).toBe(0o640);
    });

    it('runs a deny-listed command an administrator named in unsafeCommands', async () => {
      await setCommands(['env']);
      await saveSettings({ unsafeCommands: ['env'] });
      const r = await run(`${s.url}/api/command/`, 'env', as(bobToken));
      expect(r.code).toBe(1000);
      // The environment is minimal: nothing of the server's leaks into commands (the sandbox sets
      // PWD, the working folder).
      expect(r.lines.filter((l) => l !== `PWD=${bobDir}`).sort()).toEqual([
        `HOME=${bobDir}`,
        'LANG=C.UTF-8',
        `PATH=${s.bin}:/usr/bin:/bin`,
      ]);
    });

    it('lets find -exec run once an administrator allows find through the settings API', async () => {
      const admin = await login('admin');
      const put = (unsafeCommands: string[]) =>
        s.app.inject({ method: 'PUT', url: '/api/settings', payload: { unsafeCommands }, ...as(admin) });
      expect((await put(['find'])).statusCode).toBe(200);
      const r = await run(`${s.url}/api/command/`, 'find . -name hello.txt -exec cat {} ;', as(bobToken));
      expect(r).toMatchObject({ lines: ['hello'], code: 1000 });
      // Allowing find exempts find only.
      await setCommands(['find', 'env']);
      expect((await run(`${s.url}/api/command/`, 'env', as(bobToken))).lines[0]).toMatch(
        /^Command not allowed: env runs the command given in its arguments\./,
      );
      expect((await put([])).statusCode).toBe(200);
      const again = await run(`${s.url}/api/command/`, 'find . -exec cat {} ;', as(bobToken));
      expect(again).toMatchObject({
        lines: [expect.stringMatching(/^Command not allowed: find -exec/)],
        code: 1008,
      });
    });

    it('refuses find -exec, -execdir, -ok, -okdir and -delete, and runs a plain find', async () => {
      for (const primary of [
        '-exec touch pwned {} ;',
        '-execdir touch pwned ;',
        '-ok id ;',
        '-okdir id ;',
        '-delete',
      ]) {
        const r = await run(`${s.url}/api/command/`, `find . ${primary}`, as(bobToken));
        expect(r.lines[0]).toMatch(/^Command not allowed: find -/);
      }
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
      const ok = await run(`${s.url}/api/command/`, 'find . -name hello.txt', as(bobToken));
      expect(ok).toMatchObject({ lines: ['./hello.txt'], code: 1000 });
    });

    it('says when an allow-listed command is not on the PATH', async () => {
      await setCommands(['no-such-tool']);
      const r = await run(`${s.url}/api/command/`, 'no-such-tool', as(bobToken));
      expect(r.lines).toEqual(['Command not found: no-such-tool']);
    });

    it('never runs a program that lies inside the served files', async () => {
      await fs.writeFile(path.join(bobDir, 'mine'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
      s.ctx.config.execPath = `${bobDir}:/usr/bin:/bin`;
      await setCommands(['mine']);
      const r = await run(`${s.url}/api/command/`, 'mine', as(bobToken));
      expect(r.lines).toEqual(['Command not allowed: the program lies inside the served files.']);
    });
  });

  describe('no shell: every metacharacter is literal', () => {
    const forms: Array<[string, string[]]> = [
      ['printargs a;touch x', ['[a;touch]', '[x]']],
      ['printargs a && touch x', ['[a]', '[&&]', '[touch]', '[x]']],
      ['printargs a || touch x', ['[a]', '[||]', '[touch]', '[x]']],
      ['printargs a | touch x', ['[a]', '[|]', '[touch]', '[x]']],
      ['printargs a & touch x', ['[a]', '[&]', '[touch]', '[x]']],
      ['printargs $(touch x)', ['[$(touch]', '[x)]']],
      ['printargs "$(touch x)"', ['[$(touch x)]']],
      ['printargs `touch x`', ['[`touch]', '[x`]']],
      ['printargs a > x', ['[a]', '[>]', '[x]']],
      ['printargs a >> x', ['[a]', '[>>]', '[x]']],
      ['printargs a < hello.txt', ['[a]', '[<]', '[hello.txt]']],
      ['printargs $HOME ${HOME} $PATH', ['[$HOME]', '[${HOME}]', '[$PATH]']],
      ['printargs * ?.txt [h]*', ['[*]', '[?.txt]', '[[h]*]']],
      ['printargs {a,b} x{1..3}', ['[{a,b}]', '[x{1..3}]']],
      ['printargs (touch x)', ['[(touch]', '[x)]']],
      ['printargs \'a b\' "c d" e\\ f', ['[a b]', '[c d]', '[e f]']],
      ['printargs a#b # c', ['[a#b]', '[#]', '[c]']],
      ['printargs x=1 !x', ['[x=1]', '[!x]']],
    ];
    it.each(forms)('%s', async (line, expected) => {
      const r = await run(`${s.url}/api/command/`, line, as(bobToken));
      expect(r).toMatchObject({ lines: expected, code: 1000 });
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
    });

    it('echo a;touch x prints "a;touch x" and creates nothing', async () => {
      const r = await run(`${s.url}/api/command/`, 'echo a;touch x', as(bobToken));
      expect(r).toMatchObject({ lines: ['a;touch x'], code: 1000 });
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
    });

    it('sends the parse error of an unbalanced quote', async () => {
      const r = await run(`${s.url}/api/command/`, "echo 'unterminated", as(bobToken));
      expect(r).toMatchObject({ lines: ['unterminated single quote'], code: 1008 });
    });
  });
});
