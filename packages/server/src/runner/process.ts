import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { StringDecoder } from 'node:string_decoder';

/** What to start: never through a shell, always in a process group of its own. */
export interface ProcessSpec {
  /** Absolute path of the executable. */
  executable: string;
  /** argv[0] as the program sees it (the command name). */
  argv0: string;
  args: readonly string[];
  cwd: string;
  /** The complete environment: nothing of the server's own is inherited. */
  env: Record<string, string>;
  timeLimitMs: number;
  /** Bytes of stdout and stderr together. */
  outputLimit: number;
  /**
   * Descriptors handed to the program as its 3, 4, …: a number is one of ours (duplicated into
   * the child), 'empty' a stream that ends at once.
   */
  extraFds?: ReadonlyArray<number | 'empty'>;
  /** The program reports a signal that killed what it ran as exit status 128 + n (bwrap). */
  signalInExitStatus?: boolean;
  /** RLIMIT_FSIZE it runs under: a file reaching it kills the writer with SIGXFSZ. */
  fileSizeLimit?: number | undefined;
  /**
   * Called once the process group is gone, before `done` resolves: what the command held is let
   * go and what it changed is counted again there.
   */
  afterExit?: () => Promise<void>;
  /**
   * Called once it started, with a function that stops it as having passed its quota; answers
   * a function called when it ends (the quota's watch over a command, files/quota.ts).
   */
  watch?: (overQuota: () => void) => () => void;
}

export type StreamName = 'stdout' | 'stderr';

export type Outcome =
  /** Ran to its end; see exitCode/signal. */
  | 'exited'
  | 'time-limit'
  | 'output-limit'
  /** Stopped because its scope passed its quota (`watch`). */
  | 'quota-limit'
  /** Stopped by the caller (the client went away). */
  | 'stopped'
  /** Stopped because the one who started it may no longer run it (session ended, token revoked…). */
  | 'revoked'
  | 'start-failed';

export interface ProcessResult {
  outcome: Outcome;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why it could not start (start-failed). */
  error?: Error;
}

export interface RunningProcess {
  readonly pid: number | undefined;
  /** Kills the whole process group; `done` then resolves with outcome `why` ("stopped"). */
  stop(why?: 'stopped' | 'revoked'): void;
  readonly done: Promise<ProcessResult>;
}

/** Longest line sent as one piece; longer lines are cut (the old server stopped the stream). */
export const MAX_LINE = 64 * 1024;

/** How long to wait for the pipes to close after the process group was killed. */
const DRAIN_GRACE_MS = 2000;

/** True when the result is a success: exit status 0. */
export function succeeded(r: ProcessResult): boolean {
  return r.outcome === 'exited' && r.exitCode === 0;
}

/** A short description of a result for users and logs ("exit status 2", "time limit of 60 s reached"). */
export function describeResult(
  r: ProcessResult,
  spec: Pick<ProcessSpec, 'timeLimitMs' | 'outputLimit' | 'fileSizeLimit'>,
): string {
  switch (r.outcome) {
    case 'exited':
      if (r.signal === 'SIGXFSZ' && spec.fileSizeLimit !== undefined) {
        return `file size limit of ${formatBytes(spec.fileSizeLimit)} reached`;
      }
      return r.signal ? `killed by ${r.signal}` : `exit status ${r.exitCode ?? '?'}`;
    case 'time-limit':
      return `time limit of ${spec.timeLimitMs / 1000} s reached`;
    case 'output-limit':
      return `output limit of ${formatBytes(spec.outputLimit)} reached`;
    case 'quota-limit':
      return 'quota passed';
    case 'stopped':
      return 'stopped';
    case 'revoked':
      return 'stopped: access withdrawn';
    case 'start-failed':
      return 'could not start';
  }
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024 * 1024 && n % (1024 * 1024 * 1024) === 0) return `${n / (1024 * 1024 * 1024)} GiB`;
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** Cuts a byte stream into lines (without their `\n` or `\r\n`), decoding UTF-8 across chunks. */
class LineSplitter {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';

  constructor(private readonly emit: (line: string) => void) {}

  push(chunk: Buffer): void {
    this.pending += this.decoder.write(chunk);
    let nl: number;
    while ((nl = this.pending.indexOf('\n')) >= 0) {
      this.emitLine(this.pending.slice(0, nl));
      this.pending = this.pending.slice(nl + 1);
    }
    while (this.pending.length > MAX_LINE) {
      this.emit(this.pending.slice(0, MAX_LINE));
      this.pending = this.pending.slice(MAX_LINE);
    }
  }

  end(): void {
    this.pending += this.decoder.end();
    if (this.pending !== '') this.emitLine(this.pending);
    this.pending = '';
  }

  private emitLine(line: string): void {
    this.emit(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}

/** The name of signal number `n` (SIGXFSZ for 25), or undefined. */
function signalName(n: number): NodeJS.Signals | undefined {
  const entry = Object.entries(os.constants.signals).find(([, value]) => value === n);
  return entry?.[0] as NodeJS.Signals | undefined;
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    // The child leads its own process group (detached): this reaches everything it started.
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is already gone
  }
}

/**
 * Starts a program with `shell: false` in a new process group and streams its output line by line,
 * stdout and stderr interleaved in the order the lines arrive. The whole group is killed when the
 * time limit or the output limit is reached, when `stop()` is called, and when the program ends
 * (so nothing it left behind outlives it).
 */
export function startProcess(
  spec: ProcessSpec,
  onLine: (line: string, stream: StreamName) => void,
): RunningProcess {
  let child: ChildProcess;
  try {
    child = spawn(spec.executable, [...spec.args], {
      argv0: spec.argv0,
      cwd: spec.cwd,
      env: spec.env,
      shell: false,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', ...(spec.extraFds ?? []).map((fd) => (fd === 'empty' ? 'pipe' : fd))],
      windowsHide: true,
    });
  } catch (err) {
    const failed: ProcessResult = {
      outcome: 'start-failed',
      exitCode: null,
      signal: null,
      error: err as Error,
    };
    return {
      pid: undefined,
      stop: () => undefined,
      done: (spec.afterExit?.() ?? Promise.resolve()).then(
        () => failed,
        () => failed,
      ),
    };
  }
  // An empty stream ends at once: the program reads no byte from it.
  for (const [i, fd] of (spec.extraFds ?? []).entries()) {
    const stream = child.stdio[3 + i] as NodeJS.WritableStream & { destroy(): void };
    if (fd === 'empty' && stream) {
      stream.on('error', () => undefined);
      stream.end();
    }
  }

  let outcome: Outcome | undefined;
  let emitted = 0;
  let settled = false;
  let resolveDone!: (r: ProcessResult) => void;
  const done = new Promise<ProcessResult>((resolve) => (resolveDone = resolve));

  const finish = (result: ProcessResult) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    clearTimeout(drainTimer);
    unwatch?.();
    const after = spec.afterExit?.() ?? Promise.resolve();
    void after.then(
      () => resolveDone(result),
      () => resolveDone(result),
    );
  };
  const terminate = (why: Outcome) => {
    if (settled) return;
    outcome ??= why;
    killGroup(child);
  };

  const splitters = {
    stdout: new LineSplitter((line) => onLine(line, 'stdout')),
    stderr: new LineSplitter((line) => onLine(line, 'stderr')),
  };
  for (const name of ['stdout', 'stderr'] as const) {
    const stream = child[name];
    stream?.on('data', (chunk: Buffer) => {
      if (outcome === 'output-limit') return;
      const room = spec.outputLimit - emitted;
      if (chunk.length > room) {
        splitters[name].push(chunk.subarray(0, Math.max(room, 0)));
        emitted = spec.outputLimit;
        terminate('output-limit');
        return;
      }
      emitted += chunk.length;
      splitters[name].push(chunk);
    });
    stream?.on('error', () => undefined);
  }

  const timer = setTimeout(() => terminate('time-limit'), spec.timeLimitMs);
  const unwatch = spec.watch?.(() => terminate('quota-limit'));
  let drainTimer: NodeJS.Timeout | undefined;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  child.once('error', (err) => {
    // Spawn failures (ENOENT, EACCES, a missing cwd) arrive here without an exit event.
    if (child.pid === undefined)
      finish({ outcome: 'start-failed', exitCode: null, signal: null, error: err });
  });
  child.once('exit', (code, signal) => {
    exit = { code, signal };
    // The leader is gone: whatever it left running in its group goes too, so the pipes close.
    killGroup(child);
    drainTimer = setTimeout(() => {
      // Something that left the group still holds the pipes: stop reading them.
      child.stdout?.destroy();
      child.stderr?.destroy();
      close();
    }, DRAIN_GRACE_MS);
  });
  const close = () => {
    splitters.stdout.end();
    splitters.stderr.end();
    let exitCode = exit?.code ?? null;
    let signal = exit?.signal ?? null;
    if (spec.signalInExitStatus && exitCode !== null && exitCode > 128) {
      const name = signalName(exitCode - 128);
      if (name) [exitCode, signal] = [null, name];
    }
    finish({ outcome: outcome ?? 'exited', exitCode, signal });
  };
  child.once('close', close);

  return {
    pid: child.pid,
    stop: (why = 'stopped') => terminate(why),
    done,
  };
}
