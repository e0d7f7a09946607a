import fs from 'node:fs';
import path from 'node:path';

/**
 * The built server command, `packages/server/dist/main.js`, which `npm run test:e2e` builds
 * before this tier runs. Tests that start it as users do live here rather than in the unit tier,
 * so that no unit test pays for a build.
 */
export function builtServer(): string {
  const main = path.resolve(import.meta.dirname, '../../packages/server/dist/main.js');
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  return main;
}
