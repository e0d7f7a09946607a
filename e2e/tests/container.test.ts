import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../packages/server/test/tools.js';

// The Dockerfile, built and run: only where a Docker engine answers and the base image is at hand
// (FB_NODE_IMAGE, default node:20-bookworm-slim, already pulled or built). The machines this
// project's CI runs on reach no image registry, so there it is skipped with the reason printed;
// docs/operations.md#container says what is tested instead.
const repo = path.resolve(import.meta.dirname, '../..');
const baseImage = process.env.FB_NODE_IMAGE ?? 'node:20-bookworm-slim';
const IMAGE = 'filebrowser-next:smoke-test';

function docker(args: string[]) {
  return spawnSync('docker', args, { encoding: 'utf8' });
}

function whyNot(): string | undefined {
  const info = docker(['info', '--format', '{{.ServerVersion}}']);
  if (info.error || info.status !== 0) return 'no Docker engine answers';
  if (docker(['image', 'inspect', baseImage]).status !== 0) return `the base image ${baseImage} is not here`;
  return undefined;
}
const reason = whyNot();
if (reason) console.warn(`skipped: container smoke test: ${reason}`);

describe.skipIf(reason !== undefined)('the container image', () => {
  let dir: string;
  let container = '';
  let url: string;

  beforeAll(async () => {
    const build = docker(['build', '--build-arg', `NODE_IMAGE=${baseImage}`, '-t', IMAGE, repo]);
    if (build.status !== 0) throw new Error(`docker build failed:\n${build.stdout}\n${build.stderr}`);

    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-container-'));
    // The container's user (uid 1000) reads the mounted folder.
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, 'hello.txt'), 'hello from the host\n', { mode: 0o644 });
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    const run = docker(['run', '-d', '-p', `127.0.0.1:${port}:80`, '-v', `${dir}:/srv:ro`, IMAGE]);
    if (run.status !== 0) throw new Error(`docker run failed: ${run.stderr}`);
    container = run.stdout.trim();

    // The HEALTHCHECK's own verdict, as Docker reports it.
    const events = spawn('docker', [
      'events',
      '--filter',
      `container=${container}`,
      '--filter',
      'event=health_status',
      '--format',
      '{{.Status}}',
    ]);
    await new Promise<void>((resolve, reject) => {
      events.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('healthy') && !d.toString().includes('unhealthy')) resolve();
        else reject(new Error(`health: ${d.toString()}\n${docker(['logs', container]).stdout}`));
      });
    });
    events.kill();
  }, 1_800_000);

  afterAll(() => {
    if (container) docker(['rm', '-f', '-v', container]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs as uid 1000 with the database at /database/filebrowser.db, private', () => {
    expect(docker(['exec', container, 'id', '-u']).stdout.trim()).toBe('1000');
    expect(docker(['exec', container, 'stat', '-c', '%a', '/database/filebrowser.db']).stdout.trim()).toBe(
      '600',
    );
    expect(docker(['exec', container, 'cat', '/config/settings.json']).stdout).toContain('"root": "/srv"');
  });

  it('serves /srv: the one-time password from the log signs in and lists the mounted file', async () => {
    const password = /password: (\S+)/.exec(docker(['logs', container]).stdout)![1]!;
    const login = await fetch(`${url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    expect(login.status).toBe(200);
    const listing = await fetch(`${url}/api/resources/`, { headers: { 'X-Auth': await login.text() } });
    const body = (await listing.json()) as { items: { name: string }[] };
    expect(body.items.map((i) => i.name)).toEqual(['hello.txt']);
  });

  it('stops on SIGTERM with exit code 0', () => {
    expect(docker(['stop', container]).status).toBe(0);
    expect(docker(['inspect', '--format', '{{.State.ExitCode}}', container]).stdout.trim()).toBe('0');
  });
});
