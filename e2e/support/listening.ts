import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** A built server started as a child process, once it says where it listens. */
export interface Listening {
  child: ChildProcess;
  /** What it printed on stdout so far (the first start prints the administrator's password). */
  stdout: () => string;
  exited: Promise<number | null>;
}

/**
 * Starts `node <args>` and waits for its "Listening on" line: the event a test waits for, never
 * a clock. Rejects with what it printed when it exits first.
 */
export async function startListening(args: readonly string[], options: SpawnOptions): Promise<Listening> {
  const child = spawn(process.execPath, args, options);
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    void exited.then((code) => reject(new Error(`exited with ${code}; stdout: ${out} stderr: ${err}`)));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Listening on /.test(out)) resolve();
    });
  });
  return { child, stdout: () => out, exited };
}
