import { spawn } from 'node:child_process';
import type { AppContext } from '../context.js';
import type { PrivateMask } from '../files/access/private.js';
import { isInside } from '../files/access/resolver.js';
import { findExecutable, hostSystemLayout } from './executable.js';
import type { ProcessSpec } from './process.js';

/**
 * Where users' commands run. With bubblewrap (`bwrap`), each command gets a mount namespace of
 * its own that holds only what it needs: the user's scope read-write at its real path (bound from
 * the scope folder's descriptor, so no folder swapped on the way can change what is bound), the
 * host's program folders and a few files of /etc read-only, a fresh /tmp, its own /proc and a
 * minimal /dev; every private path of the server inside what it sees (the database and its side
 * files, upload staging, the preview cache, the trash) is covered by an empty read-only folder or
 * file, so a walk (`grep -r`, `du -a`, `tar`) finds them empty. No network, its own PID namespace
 * (nothing it starts outlives it), a new session, no capabilities even when the server is root.
 * Every command, sandboxed or not, also runs under resource limits set by `prlimit`: its files
 * cannot grow past the room its quota leaves (RLIMIT_FSIZE), nor its memory or process count
 * past fixed bounds.
 *
 * Whether a sandbox can be had is found out once (`runnerMode`): bwrap may be missing, or the
 * kernel may refuse the namespaces it needs (unprivileged user namespaces turned off, a container's
 * seccomp profile). Without one the runner refuses walks of folders holding private paths
 * (runner/walks.ts).
 */

export interface RunnerMode {
  /** bwrap's path when commands run in the sandbox; undefined: they run without one. */
  bwrap?: string;
  /** prlimit's path (util-linux): resource limits are set through it; undefined when missing. */
  prlimit?: string;
  /** Why there is no sandbox, for the log (and the refusal when `execSandbox` is `bwrap`). */
  reason?: string;
  /** `execSandbox` is `bwrap` and no sandbox could be had: every command is refused. */
  refuse: boolean;
}

/** Bytes of address space a command may map (RLIMIT_AS): plenty for the tools the runner is for. */
export const ADDRESS_SPACE_LIMIT = 4 * 1024 ** 3;
/** Processes (threads included) of the server's user a command may bring to (RLIMIT_NPROC; root is exempt). */
export const PROCESS_LIMIT = 1024;

/** Files of /etc programs read: the dynamic linker's cache, user names, time zone, type databases. */
const ETC_FILES = [
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/alternatives',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/mime.types',
  '/etc/magic',
  '/etc/magic.mime',
];

/** Where the two tools are looked for when the server's PATH misses them. */
const SYSTEM_PATH = ['/usr/local/bin', '/usr/bin', '/bin', '/usr/local/sbin', '/usr/sbin', '/sbin'];

const modes = new WeakMap<AppContext, Map<string, Promise<RunnerMode>>>();

/**
 * How this server runs commands, found out once per setting: bwrap and prlimit are looked up on
 * the server's PATH, and bwrap is tried with the namespaces and mounts every command gets.
 */
export function runnerMode(ctx: AppContext): Promise<RunnerMode> {
  let bySetting = modes.get(ctx);
  if (!bySetting) modes.set(ctx, (bySetting = new Map()));
  const setting = ctx.config.execSandbox;
  let mode = bySetting.get(setting);
  if (!mode) {
    mode = probe(setting);
    bySetting.set(setting, mode);
  }
  return mode;
}

/** One line for the log: which way commands run, and what an administrator can do about it. */
export function describeMode(mode: RunnerMode): { level: 'info' | 'warn' | 'error'; message: string } {
  const limits = mode.prlimit
    ? ''
    : '; prlimit (util-linux) is missing, so commands run without resource limits and are refused in scopes with a quota';
  if (mode.bwrap) {
    return {
      level: mode.prlimit ? 'info' : 'warn',
      message: `command runner: commands run in a bubblewrap sandbox (${mode.bwrap})${limits}`,
    };
  }
  if (mode.refuse) {
    return {
      level: 'error',
      message: `command runner: execSandbox is "bwrap" but no sandbox can be had (${mode.reason}): every command is refused${limits}`,
    };
  }
  return {
    level: 'warn',
    message: `command runner: commands run without a sandbox (${mode.reason}): walks of folders holding the server's own files are refused${limits}`,
  };
}

async function probe(setting: string): Promise<RunnerMode> {
  const folders = [...(process.env.PATH ?? '').split(':').filter((d) => d.startsWith('/')), ...SYSTEM_PATH];
  const prlimit = (await findExecutable('prlimit', folders))?.path;
  const base = prlimit ? { prlimit } : {};
  if (setting === 'off') return { ...base, reason: 'execSandbox is "off"', refuse: false };
  const refuse = setting === 'bwrap';
  const bwrap = (await findExecutable('bwrap', folders))?.path;
  if (!bwrap)
    return { ...base, reason: 'bwrap is not installed (Debian: apt-get install bubblewrap)', refuse };
  const trueProgram = (await findExecutable('true', SYSTEM_PATH))?.path ?? '/bin/true';
  const failure = await tryRun(bwrap, [...sandboxArguments(emptyLayout()).args, '--', trueProgram]);
  if (failure) return { ...base, reason: `bwrap cannot make a sandbox here: ${failure}`, refuse };
  return { ...base, bwrap, refuse: false };
}

/** Runs a program to its end: undefined when it exits 0, else what went wrong. */
function tryRun(program: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'], env: {}, timeout: 10_000 });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.once('error', (err) => resolve(err.message));
    child.once('close', (code, signal) => {
      if (code === 0) resolve(undefined);
      else resolve(stderr.trim().split('\n').at(-1) || `exit status ${code ?? signal}`);
    });
  });
}

/** A folder a sandboxed command sees, held open by the server (its descriptor is what is bound). */
export interface HeldFolder {
  real: string;
  descriptor: number | undefined;
}

/** What one sandboxed command sees besides the system: see the module comment. */
export interface SandboxLayout {
  /** The user's scope, bound read-write at its real path. */
  scope?: HeldFolder;
  /**
   * Folders between the scope and a private path inside it, bound onto themselves: a mount
   * point cannot be renamed or removed, so no command can carry the private path along.
   */
  holders: HeldFolder[];
  /** Folders of `--execPath` outside the served files, bound read-only. */
  programFolders: string[];
  /** The private paths inside what the command sees. */
  masks: PrivateMask[];
  /** The working folder's real path. */
  cwd?: string;
}

function emptyLayout(): SandboxLayout {
  return { holders: [], programFolders: [], masks: [] };
}

/** Folders bound read-only from the host (the system, program folders): masks go on top of them too. */
export function readOnlyTrees(layout: Pick<SandboxLayout, 'programFolders'>): string[] {
  return [
    ...hostSystemLayout()
      .filter((e) => !e.link)
      .map((e) => e.path),
    ...layout.programFolders,
  ];
}

/** What a command may keep in its own /tmp (sort's spill files, say). */
export const TMP_BYTES = 256 * 1024 * 1024;

/** What a command may keep in shared memory (/dev/shm). */
export const SHM_BYTES = 64 * 1024 * 1024;

/** Path depth, so that a mount never hides one made inside it. */
const depth = (p: string) => (p === '/' ? 0 : p.split('/').length - 1);

/**
 * bwrap's arguments for a layout, and the descriptors to hand it: the child's descriptor 3 is the
 * first, then in order; 'empty' is a stream that ends at once (the content of an empty file mask).
 */
export function sandboxArguments(layout: SandboxLayout): { args: string[]; fds: Array<number | 'empty'> } {
  const fds: Array<number | 'empty'> = [];
  const fdArg = (fd: number | 'empty') => String(3 + fds.push(fd) - 1);
  // Mounts in an order where none hides one made before it: shallowest first, ties as listed.
  const mounts: Array<{ at: string; args: () => string[] }> = [];
  const add = (at: string, args: () => string[]) => mounts.push({ at, args });
  for (const e of hostSystemLayout()) {
    add(e.path, () => (e.link ? ['--symlink', e.link, e.path] : ['--ro-bind', e.path, e.path]));
  }
  for (const f of ETC_FILES) add(f, () => ['--ro-bind-try', f, f]);
  add('/proc', () => ['--proc', '/proc']);
  // The kernel's settings are the host's, whatever the namespaces: a program the sandbox runs as
  // root must not change them (kernel.core_pattern names a program the kernel runs as the host's
  // root), nor trigger the kernel's magic keys.
  add('/proc/sys', () => ['--ro-bind', '/proc/sys', '/proc/sys']);
  add('/proc/sysrq-trigger', () => ['--ro-bind-try', '/proc/sysrq-trigger', '/proc/sysrq-trigger']);
  add('/dev', () => ['--dev', '/dev']);
  // /dev itself is a memory file system bounded only by the kernel: read-only (its device nodes
  // stay writable), with its one writable place, /dev/shm, bounded as /tmp is.
  add('/dev/shm', () => ['--size', String(SHM_BYTES), '--tmpfs', '/dev/shm', '--remount-ro', '/dev']);
  // In memory, so bounded: what one command spills there counts against the machine's RAM.
  add('/tmp', () => ['--size', String(TMP_BYTES), '--tmpfs', '/tmp']);
  const system = readOnlyTrees({ programFolders: [] });
  for (const dir of layout.programFolders) {
    if (system.some((s) => isInside(s, dir))) continue;
    add(dir, () => ['--ro-bind-try', dir, dir]);
  }
  const bind = (f: HeldFolder) =>
    f.descriptor === undefined ? ['--bind', f.real, f.real] : ['--bind-fd', fdArg(f.descriptor), f.real];
  if (layout.scope) {
    const scope = layout.scope;
    add(scope.real, () => bind(scope));
  }
  for (const h of layout.holders) add(h.real, () => bind(h));
  for (const m of layout.masks) {
    add(m.path, () =>
      m.folder
        ? ['--perms', '0555', '--tmpfs', m.path, '--remount-ro', m.path]
        : ['--perms', '0444', '--ro-bind-data', fdArg('empty'), m.path],
    );
  }
  const ordered = mounts.map((m, i) => ({ ...m, i })).sort((a, b) => depth(a.at) - depth(b.at) || a.i - b.i);
  const args = ['--unshare-all', '--die-with-parent', '--new-session', '--cap-drop', 'ALL'];
  // Descriptors are numbered in the order the arguments take them.
  for (const m of ordered) args.push(...m.args());
  if (layout.cwd) args.push('--chdir', layout.cwd);
  return { args, fds };
}

/** Limits of one command: RLIMIT_FSIZE is what its files may grow to (the room its quota leaves). */
export interface CommandLimits {
  fileSize: number;
}

/**
 * The process that runs `program` the way `mode` says: `prlimit … -- bwrap … -- program args`,
 * or without the parts that are missing. Never through a shell: each tool execs the next.
 */
export function wrapCommand(
  mode: RunnerMode,
  spec: ProcessSpec,
  limits: CommandLimits,
  layout: SandboxLayout | undefined,
): ProcessSpec {
  let argv = [spec.executable, ...spec.args];
  let fds: Array<number | 'empty'> = [];
  let signalInExitStatus = false;
  if (mode.bwrap && layout) {
    const sandbox = sandboxArguments(layout);
    argv = [mode.bwrap, ...sandbox.args, '--', ...argv];
    fds = sandbox.fds;
    // bwrap exits 128 + n when the command was killed by signal n.
    signalInExitStatus = true;
  }
  if (mode.prlimit) {
    argv = [
      mode.prlimit,
      `--fsize=${Math.max(0, Math.floor(limits.fileSize))}`,
      `--as=${ADDRESS_SPACE_LIMIT}`,
      `--nproc=${PROCESS_LIMIT}`,
      '--core=0',
      '--',
      ...argv,
    ];
  }
  const [executable, ...args] = argv as [string, ...string[]];
  return {
    ...spec,
    executable,
    argv0: executable === spec.executable ? spec.argv0 : executable,
    args,
    extraFds: fds,
    signalInExitStatus,
    fileSizeLimit: mode.prlimit ? limits.fileSize : undefined,
  };
}
