// `npm run load -- --instances N`: several servers on one PostgreSQL database and one folder,
// behind a private nginx that hands requests round robin to them (no sticky sessions), as
// docs/scale-out.md runs them.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { stopChild, track } from './cleanup.mjs';
import { request } from './http.mjs';
import { privateNginx, tempPaths } from './nginx.mjs';
import { freePort, which } from './proc.mjs';

/**
 * @param {{ workDir: string, upstreams: string[], log: (msg: string) => void }} options
 *   upstreams: the servers' bases (http://127.0.0.1:port)
 * @returns {Promise<{ base: string, stop: () => Promise<void> }>}
 */
export async function startBalancer({ workDir, upstreams, log }) {
  const bin = which('nginx');
  if (!bin) throw new Error('--instances needs nginx (Debian: apt-get install nginx)');
  const dir = path.join(workDir, 'balancer');
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const servers = upstreams.map((u) => `    server ${new URL(u).host};`).join('\n');
  const conf = `
${privateNginx(dir, 1, 4096)}
http {
  access_log off;
${tempPaths(dir)}
  upstream instances {
${servers}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 0;
    location / {
      proxy_pass http://instances;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_request_buffering off;
      proxy_buffering off;
    }
  }
}
`;
  const confFile = path.join(dir, 'nginx.conf');
  fs.writeFileSync(confFile, conf);
  const child = track(
    spawn(bin, ['-p', dir, '-c', confFile, '-e', path.join(dir, 'error.log')], { stdio: 'ignore' }),
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error('the balancer (nginx) exited during start');
    try {
      if ((await request(`${base}/health`, { timeoutMs: 2000 })).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stopChild(child);
      throw new Error('the balancer (nginx) did not answer within 15 s');
    }
    await sleep(100);
  }
  log(`balancer: nginx pid ${child.pid} on ${base}, round robin over ${upstreams.length} instances`);
  return { base, stop: () => stopChild(child) };
}
