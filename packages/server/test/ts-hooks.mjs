// Module hooks that let Node itself run the server's TypeScript source, for the one place the
// tests need it: reader threads (src/files/dir-snapshot.ts) start `dir-reader-worker.ts` as a
// worker, and a worker's modules are loaded by Node, not by vitest. The built server runs
// dist/dir-reader-worker.js instead and needs none of this. Registered by ts-register.mjs, which
// the server project's vitest config passes to its processes with --import (workers inherit it).
import fs from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

/** `./x.js` written in a .ts file means the .ts file beside it, as TypeScript resolves it. */
export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (err) {
    const fromTs = context.parentURL?.endsWith('.ts');
    if (!fromTs || !/^\.\.?\/.*\.js$/.test(specifier)) throw err;
    return next(specifier.replace(/\.js$/, '.ts'), context);
  }
}

export async function load(url, context, next) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
  const file = fileURLToPath(url);
  const { code } = await transform(await fs.readFile(file, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: file,
    sourcemap: 'inline',
  });
  return { format: 'module', source: code, shortCircuit: true };
}
