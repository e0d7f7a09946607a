// Bundles the server and CLI into dist/ (entry dist/main.js) with esbuild.
// Dependencies stay external (node_modules at run time) except those in BUNDLED below.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';

const here = import.meta.dirname;
// `--outdir <dir>` builds elsewhere (tests that must not race another build of dist/); the folder
// must lie inside the package so that the external packages resolve from it.
const outdirFlag = process.argv.indexOf('--outdir');
const outdir = outdirFlag > 0 ? path.resolve(process.argv[outdirFlag + 1]) : path.join(here, 'dist');
/**
 * Compiled in rather than loaded from node_modules at run time: the contract exports TypeScript
 * source; TypeBox's package entry loads every one of its hundreds of ES modules (6 MB of a
 * resting server's memory) where the bundle keeps only the builders the schemas use; Kysely's
 * the same way (its query builder is hundreds of modules; `pg` stays outside, loaded only for
 * PostgreSQL).
 */
const BUNDLED = ['@filebrowser/contract', '@sinclair/typebox', 'kysely'];

/** What a character in a kept comment becomes. */
const ASCII_FOR = {
  '…': '.',
  '–': '-',
  '—': '-',
  '’': "'",
  '‘': "'",
  '“': '"',
  '”': '"',
  µ: 'u',
  '×': 'x',
  '→': '>',
  '≤': '<',
  '≥': '>',
};

/** Every bare import (package or node: built-in) is external, except the contract. */
const externalPackages = {
  name: 'external-packages',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (BUNDLED.some((name) => args.path === name || args.path.startsWith(name + '/'))) return undefined;
      return { path: args.path, external: true };
    });
  },
};

/** The short commit for `filebrowser version`; a copy without git history builds as "(untracked)". */
function shortCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: here,
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
  } catch {
    return '';
  }
}

fs.rmSync(outdir, { recursive: true, force: true });
await esbuild.build({
  // The reader threads' program is a worker of its own (see files/dir-snapshot.ts).
  entryPoints: {
    main: path.join(here, 'src/main.ts'),
    'dir-reader-worker': path.join(here, 'src/files/listing/dir-reader-worker.ts'),
    // What every launcher starts the server's process with (bin/filebrowser, npm start, the bench).
    'process-settings': path.join(here, 'src/process-settings.ts'),
  },
  outdir,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  // main.ts sets V8 flags and then imports the program dynamically: splitting keeps that import
  // a real one, so no dependency is loaded before the flags are set. Chunks sit
  // beside main.js so that import.meta.dirname is the same folder in every chunk.
  splitting: true,
  chunkNames: '[name]-[hash]',
  plugins: [externalPackages],
  define: { __FB_COMMIT__: JSON.stringify(shortCommit()) },
  // CommonJS code compiled into an ES module may still call require().
  banner: {
    js: "import { createRequire as __fbCreateRequire } from 'node:module'; const require = __fbCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
// V8 holds a module's source text for the life of the process, as one byte a character when it is
// all ASCII and two otherwise. esbuild escapes every other character in code, but keeps some
// comments as written: six of them with a "…" or a "µ" made the whole 1.3 MB bundle two bytes a
// character, 1.3 MB more at rest. Those characters become one ASCII character each (the source
// maps' columns stay true).
for (const name of fs.readdirSync(outdir)) {
  if (!name.endsWith('.js')) continue;
  const file = path.join(outdir, name);
  const text = fs.readFileSync(file, 'utf8');
  // eslint-disable-next-line no-control-regex
  const ascii = text.replace(/[^\u0000-\u007f]/g, (c) => ASCII_FOR[c] ?? '?');
  if (ascii !== text) fs.writeFileSync(file, ascii);
}
// bin/filebrowser is a POSIX shell script (it `exec`s node with the settings): it sources them.
const { shellSettings } = await import(path.join(outdir, 'process-settings.js'));
fs.writeFileSync(path.join(outdir, 'process-settings.sh'), shellSettings());
console.log(`built ${path.relative(process.cwd(), path.join(outdir, 'main.js'))}`);
