/**
 * What the server's process is started with, whoever starts it: `bin/filebrowser` (and through
 * it the systemd unit and the container image), `npm start` (`scripts/start.mjs`) and the bench
 * (`bench/lib/server.mjs`). These take effect only when a process starts, so the server cannot
 * set them itself (Node 20 cannot replace its own process): each launcher reads them from here,
 * through `dist/process-settings.js` or, for the POSIX shell launcher, `dist/process-settings.sh`
 * (both written by `build.mjs`). docs/performance.md, "Memory over the bench", has the figures.
 *
 * A value the user already gave wins: a variable set in the environment (even to ""), a node
 * flag of the same name in `NODE_OPTIONS` or among the flags a launcher was given.
 */

/**
 * glibc gives every thread that allocates a malloc arena of its own (up to 8 per core), and an
 * arena keeps what was freed in it: libvips' worker threads (image previews) and the thread pool
 * left 25–45 MB there. glibc reads this when the process starts.
 */
export const SERVER_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2' };

/**
 * Each of the young generation's two semi-spaces stops growing at this size. V8 doubles them up
 * to 16 MB each whenever much survives a scavenge and never gives that back; the garbage of a
 * request (a listing's items, an upload's socket buffers) then lies there 16 MB at a time. Only
 * the command line (or NODE_OPTIONS) can cap it: V8 fixes the maximum when it starts.
 */
export const SEMI_SPACE_MB = 2;

export const SERVER_NODE_FLAGS: readonly string[] = [`--max-semi-space-size=${SEMI_SPACE_MB}`];

/** `--max_semi-space-size=4` → `--max-semi-space-size`: V8 reads `_` and `-` alike. */
function flagName(flag: string): string {
  return flag.split('=')[0]!.replace(/_/g, '-');
}

export interface ServerLaunch {
  /** The whole environment for the server's process. */
  env: Record<string, string>;
  /** Node flags to put before the entry file: ours that were not given, then the given ones. */
  nodeArgs: string[];
}

/**
 * The environment and node flags to start the server with, from the launcher's environment and
 * the node flags it was asked to add.
 */
export function serverLaunch(
  env: Readonly<Record<string, string | undefined>>,
  givenNodeArgs: readonly string[] = [],
): ServerLaunch {
  const given = new Set(
    [...(env.NODE_OPTIONS ?? '').split(/\s+/), ...givenNodeArgs]
      .filter((arg) => arg.startsWith('--'))
      .map(flagName),
  );
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) merged[name] = value;
  for (const [name, value] of Object.entries(SERVER_ENV)) merged[name] ??= value;
  return {
    env: merged,
    nodeArgs: [...SERVER_NODE_FLAGS.filter((flag) => !given.has(flagName(flag))), ...givenNodeArgs],
  };
}

/** A POSIX shell word that stands for `value` exactly. */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The same rules in POSIX shell, for `bin/filebrowser` to source: exports the variables not
 * already set and leaves the node flags to add in `fb_node_flags` (words without spaces).
 */
export function shellSettings(): string {
  const lines = [
    '# Written by build.mjs from src/process-settings.ts (the one definition); sourced by',
    '# bin/filebrowser. Values already in the environment or in NODE_OPTIONS win.',
  ];
  for (const [name, value] of Object.entries(SERVER_ENV)) {
    if (!/^[A-Z_][A-Z0-9_]*$/.test(name)) throw new Error(`not a variable name: ${name}`);
    lines.push(`[ -n "\${${name}+set}" ] || { ${name}=${shellQuote(value)}; export ${name}; }`);
  }
  // V8 reads `_` and `-` alike in a flag's name: compare the names with `-` only.
  lines.push(`fb_given=" $(printf '%s' "\${NODE_OPTIONS-}" | tr '_' '-') "`, 'fb_node_flags=');
  for (const flag of SERVER_NODE_FLAGS) {
    if (/[\s'"\\$`*?[\]]/.test(flag)) throw new Error(`not a plain flag: ${flag}`);
    const name = flagName(flag);
    lines.push(
      `case $fb_given in`,
      `  *" ${name}="* | *" ${name} "*) ;;`,
      `  *) fb_node_flags="$fb_node_flags ${flag}" ;;`,
      `esac`,
    );
  }
  return lines.join('\n') + '\n';
}
