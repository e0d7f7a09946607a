import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeResult,
  MAX_LINE,
  startProcess,
  type ProcessSpec,
  type StreamName,
} from '../src/runner/process.js';

/** Gone, or a zombie waiting for its new parent to reap it: it runs no more. */
async function gone(pid: number, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      process.kill(pid, 0);
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return true;
    } catch {
      return true;
    }
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The process layer sits below every policy: here /bin/sh is simply a convenient test program.
describe('startProcess', () => {
  let cwd: string;
  beforeAll(async () => {
    cwd = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-process-'));
  });
  afterAll(() => fs.rm(cwd, { recursive: true, force: true }));

  const spec = (script: string, over: Partial<ProcessSpec> = {}): ProcessSpec => ({
    executable: '/bin/sh',
    argv0: 'sh',
    args: ['-c', script],
    cwd,
    env: { PATH: '/usr/bin:/bin', HOME: cwd, LANG: 'C.UTF-8' },
    timeLimitMs: 10_000,
    outputLimit: 1024 * 1024,
    ...over,
  });
  const collect = async (s: ProcessSpec) => {
    const lines: Array<[StreamName, string]> = [];
    const p = startProcess(s, (line, stream) => lines.push([stream, line]));
    return { result: await p.done, lines, pid: p.pid };
  };

  it('streams lines of both streams as they come, and the exit status', async () => {
    const { result, lines } = await collect(
      spec('echo a; sleep 0.1; echo b >&2; sleep 0.1; printf "c\\r\\nd"; sleep 0.1; echo e >&2; exit 4'),
    );
    expect(lines).toEqual([
      ['stdout', 'a'],
      ['stderr', 'b'],
      ['stdout', 'c'],
      ['stderr', 'e'],
      // A line is sent when it is complete, or when the program ends.
      ['stdout', 'd'],
    ]);
    expect(result).toMatchObject({ outcome: 'exited', exitCode: 4, signal: null });
    expect(describeResult(result, spec(''))).toBe('exit status 4');
  });

  it('passes only the given environment and working folder', async () => {
    const { lines } = await collect(spec('pwd; env | sort'));
    const out = lines.map(([, l]) => l);
    expect(out[0]).toBe(await fs.realpath(cwd));
    expect(out.slice(1).filter((l) => !/^(PWD|SHLVL|_)=/.test(l))).toEqual([
      `HOME=${cwd}`,
      'LANG=C.UTF-8',
      'PATH=/usr/bin:/bin',
    ]);
  });

  it('runs in a process group of its own', async () => {
    const { lines, pid } = await collect(spec('ps -o pgid= -p $$'));
    expect(Number(lines[0]?.[1])).toBe(pid);
  });

  it('kills the whole group at the time limit', async () => {
    const started = Date.now();
    const { result, lines } = await collect(spec('sleep 30 & echo $!; wait', { timeLimitMs: 500 }));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(result.outcome).toBe('time-limit');
    expect(describeResult(result, { timeLimitMs: 500, outputLimit: 1 })).toBe('time limit of 0.5 s reached');
    expect(await gone(Number(lines[0]?.[1]))).toBe(true);
  });

  it('kills the group when the program ends, so nothing it started lingers', async () => {
    const { result, lines } = await collect(spec('sleep 30 >/dev/null 2>&1 & echo $!'));
    expect(result).toMatchObject({ outcome: 'exited', exitCode: 0 });
    expect(await gone(Number(lines[0]?.[1]))).toBe(true);
  });

  it('stops at the output limit', async () => {
    const { result, lines } = await collect(spec('yes', { outputLimit: 10_000 }));
    expect(result.outcome).toBe('output-limit');
    const bytes = lines.reduce((n, [, l]) => n + l.length + 1, 0);
    expect(bytes).toBeLessThanOrEqual(10_001);
    expect(bytes).toBeGreaterThan(9_000);
  });

  it('cuts very long lines into pieces', async () => {
    const { lines } = await collect(spec(`head -c ${MAX_LINE * 2 + 10} /dev/zero | tr '\\0' x`));
    expect(lines.map(([, l]) => l.length)).toEqual([MAX_LINE, MAX_LINE, 10]);
  });

  it('stops on request', async () => {
    const p = startProcess(spec('sleep 30'), () => undefined);
    setTimeout(() => p.stop(), 100);
    expect((await p.done).outcome).toBe('stopped');
    expect(await gone(p.pid!)).toBe(true);
  });

  it('reports a program that cannot start', async () => {
    const { result } = await collect(spec('', { executable: path.join(cwd, 'missing') }));
    expect(result.outcome).toBe('start-failed');
    const badCwd = await collect(spec('true', { cwd: path.join(cwd, 'missing') }));
    expect(badCwd.result.outcome).toBe('start-failed');
  });

  it('decodes UTF-8 split across chunks', async () => {
    const { lines } = await collect(spec(`printf '\\303'; sleep 0.1; printf '\\251t\\303\\251\\n'`));
    expect(lines).toEqual([['stdout', 'été']]);
  });
});
