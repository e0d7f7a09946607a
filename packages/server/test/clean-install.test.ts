import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/*
 * What `npm ci` installs, read from package-lock.json: every package must run on each Node
 * version the README promises (npm warns EBADENGINE otherwise: cookie 2 wanted Node 22), and
 * nothing is installed that no code uses.
 */

const REPO = path.resolve(import.meta.dirname, '../../..');
const read = (file: string): unknown => JSON.parse(fs.readFileSync(path.join(REPO, file), 'utf8'));

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  optional?: boolean;
  os?: string[];
}
const lock = read('package-lock.json') as { packages: Record<string, LockEntry> };
const root = read('package.json') as { engines: { node: string } };

// semver comes with npm's own resolution of the tree (fastify depends on it).
const semver = createRequire(import.meta.url)('semver') as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

/**
 * The oldest release of each line promised: 20.19 (package.json's engines), 22.13 (what current
 * tooling such as rolldown and eslint asks of the 22 line) and 24.
 */
const NODE_VERSIONS = [semver.minVersion(root.engines.node)!.version, '22.13.0', '24.0.0'];

describe('a clean install', () => {
  it(`runs on Node ${NODE_VERSIONS.join(', ')}: no package asks for more (no EBADENGINE)`, () => {
    expect(NODE_VERSIONS[0]).toBe('20.19.0');
    const refused: string[] = [];
    for (const [where, entry] of Object.entries(lock.packages)) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (!where || !range) continue;
      for (const version of NODE_VERSIONS) {
        if (!semver.satisfies(version, range))
          refused.push(`${where}@${entry.version} wants ${range}, not ${version}`);
      }
    }
    expect(refused).toEqual([]);
  });

  // Imported, required or loaded lazily: named as a module specifier in a string.
  it('installs no dependency that the code of its package does not import', () => {
    const unused: string[] = [];
    for (const pkg of ['packages/server', 'packages/web']) {
      const manifest = read(`${pkg}/package.json`) as { dependencies?: Record<string, string> };
      const sources = sourceTexts(path.join(REPO, pkg, 'src'));
      for (const name of Object.keys(manifest.dependencies ?? {})) {
        const imported = new RegExp(`['"]${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(?:/[^'"]*)?['"]`);
        if (!sources.some((text) => imported.test(text))) unused.push(`${pkg}: ${name}`);
      }
    }
    expect(unused).toEqual([]);
  });

  it('ships one icon font family, the one the web app uses', () => {
    const imports = sourceTexts(path.join(REPO, 'packages/web/src')).flatMap((text) =>
      [...text.matchAll(/import '(material-icons\/[^']+)'/g)].map((m) => m[1]!),
    );
    expect(imports).toEqual(['material-icons/iconfont/filled.css']);
    const css = fs.readFileSync(path.join(REPO, 'node_modules', imports[0]!), 'utf8');
    expect(css.match(/@font-face/g)).toHaveLength(1);
  });
});

function sourceTexts(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .flatMap((e) =>
      e.isFile() && /\.(ts|tsx|js|mjs)$/.test(e.name)
        ? [fs.readFileSync(path.join(e.parentPath, e.name), 'utf8')]
        : [],
    );
}
