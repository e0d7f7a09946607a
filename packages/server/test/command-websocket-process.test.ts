import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { testExecSandbox } from './tools.js';
import { describe, expect, it } from 'vitest';
import type WebSocket from 'ws';
import { MAX_SOCKETS_PER_USER } from '../src/http/command/routes.js';
import {
  useCommandServer,
  PASSWORD,
  type Outcome,
  run,
  marker,
  marked,
  until,
  s,
  bobToken,
  bobDir,
  as,
  setCommands,
  saveSettings,
} from './command-websocket-helpers.js';

/**
 * The command WebSocket's paths confined to the scope, its messages, and the process it runs:
 * output in order, the exit status, time and output limits, the process group killed when the
 * socket closes, and the few sockets one user may hold.
 */
describe('command websocket', () => {
  useCommandServer();

  describe('paths are confined to the scope', () => {
    const refused = async (line: string) => {
      const r = await run(`${s.url}/api/command/`, line, as(bobToken));
      expect(r.lines[0], line).toMatch(
        // Without a sandbox any ".." is refused before it is resolved (runner/arguments.ts).
        /^Command not allowed: the path .* (is outside your scope|names another user’s home folder|goes up with "\.\.": without the runner's sandbox \(bubblewrap\), a folder moved while the command runs would make it lead elsewhere)\.$/,
      );
      expect(r.code).toBe(1008);
      expect(r.lines).toHaveLength(1);
    };

    it('refuses absolute paths outside the scope', async () => {
      await refused('cat /etc/passwd');
      await refused(`cat ${s.outside}/secret.txt`);
      await refused(`cat ${s.root}/users/alice/secret.txt`);
      await refused('ls /');
    });

    it('refuses ../ arguments that leave the scope', async () => {
      await refused('cat ../alice/secret.txt');
      await refused('cat ../../../outside/secret.txt');
      await refused('cat sub/../../alice/secret.txt');
      await refused('ls ..');
    });

    it('refuses paths inside options and assignments', async () => {
      await setCommands(['cat', 'ls', 'dd', 'printargs']);
      await refused('dd if=/etc/passwd');
      await refused('ls --hide=x --ignore=/etc');
      await refused('printargs -f/etc/passwd');
      await refused('printargs -xvf../alice/secret.txt');
      await refused('printargs @/etc/passwd');
      await refused('printargs file:///etc/passwd');
      await refused('cat ~root/x');
    });

    it('refuses a symlink in the scope that leads out of it', async () => {
      await fs.symlink(s.outside, path.join(bobDir, 'link'));
      await refused('cat link/secret.txt');
      await refused('cat link');
    });

    it('allows paths that stay inside, absolute ones included', async () => {
      await fs.mkdir(path.join(bobDir, 'sub'));
      const sandboxed = testExecSandbox() === 'bwrap';
      for (const line of [
        'cat hello.txt',
        ...(sandboxed ? ['cat ./sub/../hello.txt'] : []),
        `cat ${bobDir}/hello.txt`,
      ]) {
        const r = await run(`${s.url}/api/command/`, line, as(bobToken));
        expect(r, line).toMatchObject({ lines: ['hello'], code: 1000 });
      }
      // `~` is checked as the home folder (the scope) but, with no shell, passed on unexpanded.
      const tilde = await run(`${s.url}/api/command/`, 'printargs ~/hello.txt ~', as(bobToken));
      expect(tilde).toMatchObject({ lines: ['[~/hello.txt]', '[~]'], code: 1000 });
    });

    it('runs in the requested folder, resolved through the scope', async () => {
      await fs.mkdir(path.join(bobDir, 'sub'));
      const r = await run(`${s.url}/api/command/sub`, 'pwd', as(bobToken));
      expect(r).toMatchObject({ lines: [path.join(bobDir, 'sub')], code: 1000 });
      const home = await run(`${s.url}/api/command/`, 'pwd', as(bobToken));
      expect(home.lines).toEqual([bobDir]);
    });

    it('refuses a working folder that is missing, outside or hidden by rules', async () => {
      expect((await run(`${s.url}/api/command/nope`, 'pwd', as(bobToken))).lines).toEqual([
        'The working folder does not exist.',
      ]);
      await fs.symlink(s.outside, path.join(bobDir, 'out'));
      expect((await run(`${s.url}/api/command/out`, 'pwd', as(bobToken))).lines).toEqual([
        'Command not allowed.',
      ]);
      await fs.mkdir(path.join(bobDir, 'private'));
      await saveSettings({ rules: [{ regex: false, allow: false, path: '/private', regexp: null }] });
      expect((await run(`${s.url}/api/command/private`, 'pwd', as(bobToken))).lines).toEqual([
        'Command not allowed.',
      ]);
      const r = await run(`${s.url}/api/command/`, 'ls private', as(bobToken));
      expect(r.lines[0]).toBe('Command not allowed: the path "private" is hidden by your rules.');
    });
  });

  describe('messages', () => {
    it('skips whitespace-only messages and runs the first real one', async () => {
      const r = await run(`${s.url}/api/command/`, undefined, {
        ...as(bobToken),
        messages: ['   ', '\n\t', 'echo hi'],
      });
      expect(r).toMatchObject({ lines: ['hi'], code: 1000 });
    });

    it('closes with 1009 on an oversized message and runs nothing', async () => {
      await setCommands(['touch']);
      const big = 'touch made-by-big-message ' + 'a'.repeat(100 * 1024);
      const r = await run(`${s.url}/api/command/`, big, as(bobToken));
      expect(r.code).toBe(1009);
      expect(r.lines).toEqual([]);
      await expect(fs.readdir(bobDir)).resolves.toEqual(['hello.txt']);
    });
  });

  describe('the process', () => {
    it('streams stdout and stderr interleaved, in the order they were written', async () => {
      const r = await run(`${s.url}/api/command/`, 'interleave', as(bobToken));
      expect(r).toMatchObject({
        lines: ['out1', 'err1', 'out2', 'err2'],
        code: 1000,
        reason: 'exit status 0',
      });
    });

    it('reports a non-zero exit status with close code 1011', async () => {
      const r = await run(`${s.url}/api/command/`, 'fail', as(bobToken));
      expect(r).toMatchObject({ lines: ['bad'], code: 1011, reason: 'exit status 3' });
    });

    it('kills the command at the time limit', async () => {
      s.ctx.config.execTimeLimit = 1;
      const started = Date.now();
      const r = await run(`${s.url}/api/command/`, 'sleep 5', as(bobToken));
      expect(Date.now() - started).toBeLessThan(4000);
      expect(r).toMatchObject({
        lines: ['Command stopped: time limit of 1 s reached.'],
        code: 1011,
        reason: 'time limit of 1 s reached',
      });
    });

    it('kills the command when its output passes the cap', async () => {
      s.ctx.config.execOutputLimit = 4096;
      const r = await run(`${s.url}/api/command/`, 'yes', as(bobToken));
      expect(r.code).toBe(1011);
      expect(r.lines.at(-1)).toBe('Command stopped: output limit of 4 KiB reached.');
      const body = r.lines.slice(0, -1);
      expect(body.length).toBeGreaterThan(1000);
      expect(body.join('\n').length).toBeLessThanOrEqual(4096);
    });

    it('kills the whole process group when the socket closes', async () => {
      const mark = marker();
      let seen = 0;
      const r = await run(`${s.url}/api/command/`, `spawner ${mark}`, {
        ...as(bobToken),
        onLine: (line, ws) => {
          if (line !== 'started') return;
          marked(mark).then(
            (pids) => {
              seen = pids.length;
              ws.terminate();
            },
            () => ws.terminate(),
          );
        },
      });
      expect(r.lines).toEqual(['started']);
      // The leader and its sleep (and the sandbox's processes, when there is one) were running.
      expect(seen).toBeGreaterThanOrEqual(2);
      expect(await until(async () => (await marked(mark)).length === 0)).toBe(true);
    });

    it('stops a command whose socket closed while it was starting, and frees its slot', async () => {
      // Closed right after the command line: the close lands somewhere in the command's start-up.
      const mark = marker();
      for (let i = 0; i < MAX_SOCKETS_PER_USER * 2; i++) {
        await run(`${s.url}/api/command/`, `spawner ${mark}`, { ...as(bobToken), closeAfterSend: true });
      }
      expect(
        await until(
          async () => (await run(`${s.url}/api/command/`, 'echo hi', as(bobToken))).lines[0] === 'hi',
        ),
      ).toBe(true);
      expect(await until(async () => (await marked(mark)).length === 0)).toBe(true);
    });

    it('kills the process group when the socket closes while the server is busy', async () => {
      // Keep libuv's thread pool queued up (the server runs in this process), so the command's
      // start-up awaits file-system work while its output and the close already arrive. Short
      // jobs, queued again as each ends, keep it as busy as long ones while making each of the
      // start-up's calls wait less: on a loaded machine long ones made the start-up take minutes.
      let busy = true;
      const keepBusy = async () => {
        while (busy) await new Promise((r) => crypto.pbkdf2(PASSWORD, 'salt', 30_000, 32, 'sha256', r));
      };
      const workers = Array.from({ length: 8 }, keepBusy);
      const mark = marker();
      try {
        const r = await run(`${s.url}/api/command/`, `spawner ${mark}`, {
          ...as(bobToken),
          onLine: (line, ws) => {
            if (line === 'started') ws.terminate();
          },
        });
        expect(r.lines).toEqual(['started']);
      } finally {
        busy = false;
        await Promise.all(workers);
      }
      expect(await until(async () => (await marked(mark)).length === 0)).toBe(true);
    });

    it('lets one user hold only a few command sockets at once', async () => {
      const sockets: WebSocket[] = [];
      const runs: Array<Promise<Outcome>> = [];
      for (let i = 0; i < MAX_SOCKETS_PER_USER; i++) {
        runs.push(
          run(`${s.url}/api/command/`, 'spawner', {
            ...as(bobToken),
            onLine: (line, ws) => {
              if (line === 'started') sockets.push(ws);
            },
          }),
        );
      }
      expect(await until(() => sockets.length === MAX_SOCKETS_PER_USER)).toBe(true);
      const extra = await run(`${s.url}/api/command/`, 'echo hi', as(bobToken));
      expect(extra.lines).toEqual([`Command not allowed: you already run ${MAX_SOCKETS_PER_USER} commands.`]);
      for (const ws of sockets) ws.close();
      await Promise.all(runs);
      expect(
        await until(
          async () => (await run(`${s.url}/api/command/`, 'echo hi', as(bobToken))).lines[0] === 'hi',
        ),
      ).toBe(true);
    });

    it('treats file names made of shell syntax as plain names', async () => {
      const marker = `pwned-${crypto.randomUUID()}`;
      const name = `$(touch ${marker});touch ${marker}`;
      await fs.writeFile(path.join(bobDir, name), 'x');
      const r = await run(`${s.url}/api/command/`, `ls -1`, as(bobToken));
      expect(r.lines.sort()).toEqual([name, 'hello.txt'].sort());
      const p = await run(`${s.url}/api/command/`, `printargs '${name}'`, as(bobToken));
      expect(p.lines).toEqual([`[${name}]`]);
      expect((await fs.readdir(bobDir)).sort()).toEqual([name, 'hello.txt'].sort());
    });
  });
});
