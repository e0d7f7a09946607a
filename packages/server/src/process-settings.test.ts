import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SERVER_ENV, SERVER_NODE_FLAGS, serverLaunch, shellSettings } from './process-settings.js';

const ours = Object.entries(SERVER_ENV);

describe('serverLaunch', () => {
  it('adds the settings to an environment that has none, keeping everything else', () => {
    const launch = serverLaunch({ PATH: '/bin', HOME: '/home/a', UNSET: undefined });
    expect(launch.env).toEqual({ PATH: '/bin', HOME: '/home/a', ...SERVER_ENV });
    expect(launch.nodeArgs).toEqual([...SERVER_NODE_FLAGS]);
  });

  it('leaves a variable the user set as it is, even to nothing', () => {
    for (const value of ['8', '']) {
      const env = Object.fromEntries(ours.map(([name]) => [name, value]));
      expect(serverLaunch(env).env).toEqual(env);
    }
  });

  it('adds no flag that NODE_OPTIONS already sets, in any spelling', () => {
    for (const flag of SERVER_NODE_FLAGS) {
      const name = flag.split('=')[0]!;
      for (const given of [
        `${name}=64`,
        `--${name.slice(2).replace(/-/g, '_')}=64`,
        `--trace-gc  ${name} 64`,
      ]) {
        expect(serverLaunch({ NODE_OPTIONS: given }).nodeArgs).not.toContain(flag);
      }
    }
    expect(serverLaunch({ NODE_OPTIONS: '--trace-gc' }).nodeArgs).toEqual([...SERVER_NODE_FLAGS]);
  });

  it('puts the given node flags after its own, and drops its own that they set', () => {
    expect(serverLaunch({}, ['--cpu-prof']).nodeArgs).toEqual([...SERVER_NODE_FLAGS, '--cpu-prof']);
    const theirs = SERVER_NODE_FLAGS.map((flag) => `${flag.split('=')[0]!}=64`);
    expect(serverLaunch({}, theirs).nodeArgs).toEqual(theirs);
  });
});

/** Sources the shell form in a real `sh` with `env` and answers what it leaves. */
function inShell(env: Record<string, string>) {
  const script = `${shellSettings()}
printf '%s\\n' "$fb_node_flags"
${ours.map(([name]) => `printf '%s\\n' "\${${name}-(unset)}"`).join('\n')}
env | grep -c '^fb_' || true`;
  const r = spawnSync('sh', ['-euc', script], {
    env: { PATH: process.env.PATH ?? '/bin:/usr/bin', ...env },
    encoding: 'utf8',
  });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const lines = r.stdout.split('\n');
  return {
    flags: lines[0]!.trim().split(/\s+/).filter(Boolean),
    values: lines.slice(1, 1 + ours.length),
    exported: lines[1 + ours.length],
  };
}

describe('shellSettings (sourced by bin/filebrowser)', () => {
  it('applies the same settings as serverLaunch, and exports only the variables', () => {
    const shell = inShell({});
    expect(shell.flags).toEqual(serverLaunch({}).nodeArgs);
    expect(shell.values).toEqual(ours.map(([, value]) => value));
    expect(shell.exported).toBe('0');
  });

  it("leaves the user's own values as they are, as serverLaunch does", () => {
    for (const [name] of ours)
      expect(inShell({ [name]: '' }).values[ours.findIndex(([n]) => n === name)]).toBe('');
    for (const flag of SERVER_NODE_FLAGS) {
      const name = flag.split('=')[0]!;
      for (const given of [
        `${name}=64`,
        `--${name.slice(2).replace(/-/g, '_')}=64`,
        `--trace-gc ${name} 64`,
      ]) {
        expect(inShell({ NODE_OPTIONS: given }).flags).toEqual(
          serverLaunch({ NODE_OPTIONS: given }).nodeArgs,
        );
      }
    }
    expect(inShell({ NODE_OPTIONS: '--trace-gc' }).flags).toEqual([...SERVER_NODE_FLAGS]);
  });
});
