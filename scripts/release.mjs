// `npm run release`: one installable tarball, dist/filebrowser-next-<version>.tgz, holding the
// bundled server and CLI, the built web app and a package.json whose only dependencies are the
// server's run-time packages (native ones such as better-sqlite3 and sharp are built or fetched
// by npm on the installing machine, for its platform). `npm install -g <tgz>` gives the
// `filebrowser` command; the one thing built there is the server's own small native addon
// (server/native, compiled by the package's install script when a compiler is there, skipped
// with a warning otherwise: the server then reads folders in JavaScript).
//
// Layout inside the package: server/dist (the bundle), server/bin/filebrowser (a shell launcher)
// and web/dist, so that the server's default web folder (server/dist/../../web/dist) holds there
// as it does in the git checkout.
//
// `--skip-build` packs what `npm run build` last wrote (the e2e tier has just built it).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');
const at = (...parts) => path.join(repo, ...parts);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const readJson = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) {
    console.error(`release: ${command} ${args.join(' ')} failed in ${cwd}`);
    process.exit(result.status ?? 1);
  }
}

if (!process.argv.includes('--skip-build')) run(npm, ['run', 'build'], repo);
for (const built of ['packages/server/dist/main.js', 'packages/web/dist/index.html']) {
  if (!fs.existsSync(at(built))) {
    console.error(`release: ${built} is missing: run \`npm run build\` first`);
    process.exit(1);
  }
}

const root = readJson(at('package.json'));
const server = readJson(at('packages/server/package.json'));

/**
 * The version npm installed here, exactly: the tarball then runs with what the tests ran with,
 * not whatever a range allows on release day.
 */
function installedVersion(name) {
  for (const dir of [at('packages/server/node_modules', name), at('node_modules', name)]) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return readJson(file).version;
  }
  throw new Error(`release: dependency ${name} is not installed: run \`npm ci\` first`);
}

const dependencies = Object.fromEntries(
  Object.keys(server.dependencies)
    .sort()
    .map((name) => [name, installedVersion(name)]),
);

const manifest = {
  name: root.name,
  version: root.version,
  description: root.description,
  license: root.license,
  type: 'module',
  engines: root.engines,
  bin: { filebrowser: 'server/bin/filebrowser' },
  scripts: { install: 'node server/native/build.mjs' },
  files: ['server', 'web', 'docs', 'README.md', 'LICENSE', 'CHANGELOG.md', 'SECURITY.md'],
  dependencies,
};

const stage = at('dist/stage');
fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
const copy = (from, to = from) => fs.cpSync(at(from), path.join(stage, to), { recursive: true });
copy('packages/server/dist', 'server/dist');
copy('packages/server/bin', 'server/bin');
// The addon's source, never a binary built here for this machine.
for (const file of ['binding.gyp', 'fb_native.c', 'build.mjs'])
  copy(`packages/server/native/${file}`, `server/native/${file}`);
copy('packages/web/dist', 'web/dist');
copy('docs');
for (const file of ['README.md', 'LICENSE', 'CHANGELOG.md', 'SECURITY.md']) copy(file);
fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');

const out = at('dist');
const packed = spawnSync(npm, ['pack', '--json', '--pack-destination', out], {
  cwd: stage,
  stdio: ['ignore', 'pipe', 'inherit'],
});
if (packed.status !== 0) process.exit(packed.status ?? 1);
const [{ filename }] = JSON.parse(packed.stdout.toString());
fs.rmSync(stage, { recursive: true, force: true });
console.log(`release: ${path.relative(process.cwd(), path.join(out, filename))}`);
