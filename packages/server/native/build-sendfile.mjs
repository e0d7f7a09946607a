// Compiles native/sendfile.c into a Node addon with the system's C compiler and the headers of
// the running Node (its include/node folder). Nothing is downloaded; without a compiler or the
// headers the server simply sends files without it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const source = path.join(import.meta.dirname, 'sendfile.c');

/** Node's headers beside its binary (official builds and Debian's both ship them). */
function nodeHeaders() {
  const candidates = [
    path.join(path.dirname(process.execPath), '..', 'include', 'node'),
    '/usr/include/node',
    '/usr/local/include/node',
  ];
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'node_api.h')));
}

/**
 * Builds the addon at `outFile`; returns why not when it cannot (another OS, no compiler, no
 * headers), so the caller can say so and go on.
 * @param {string} outFile
 * @returns {string | undefined}
 */
export function buildSendfile(outFile) {
  if (process.platform !== 'linux') return 'sendfile(2) of a file to a socket is Linux-only here';
  const headers = nodeHeaders();
  if (!headers) return "Node's headers (include/node/node_api.h) were not found";
  try {
    execFileSync(
      process.env.CC || 'cc',
      ['-O2', '-Wall', '-shared', '-fPIC', `-I${headers}`, '-o', outFile, source],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    return undefined;
  } catch (err) {
    return `the C compiler failed: ${String(/** @type {{ stderr?: Buffer }} */ (err).stderr ?? err).trim()}`;
  }
}
