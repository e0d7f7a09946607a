#!/usr/bin/env node
// Runs the npm scripts named on the command line at the same time (`node scripts/run-together.mjs
// typecheck lint`): each is mostly one busy core, so two cores finish both in the time of the
// longer. Each script's output is kept and printed whole once it ends, so the two never interleave;
// the exit status is the first failure's, or 0.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: node scripts/run-together.mjs <npm script> [<npm script> ...]');
  process.exit(2);
}

const runs = names.map((name) =>
  new Promise((resolve) => {
    const child = spawn(npm, ['run', name], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('error', (err) => {
      output.push(Buffer.from(`could not start npm run ${name}: ${err.message}\n`));
      resolve({ name, code: 1, output });
    });
    child.on('close', (code, signal) => resolve({ name, code: code ?? (signal ? 1 : 0), output }));
  }).then((run) => {
    process.stdout.write(Buffer.concat(run.output));
    if (run.code !== 0) console.error(`npm run ${run.name} failed (exit status ${run.code})`);
    return run;
  }),
);

const results = await Promise.all(runs);
process.exit(results.find((r) => r.code !== 0)?.code ?? 0);
