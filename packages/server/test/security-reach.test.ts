import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { CALLERS } from '../src/auth/policy.js';
import { defaultConfig } from '../src/config/defaults.js';
import { FILE_CHANGES, OPEN } from '../src/http/reach.js';
import { openStore } from '../src/store/index.js';
import {
  useReachWorld,
  MARK,
  CONTENT,
  t,
  port,
  world,
  credentials,
  scopeView,
  folderView,
  baseline,
  inventory,
  expected,
  refusalOf,
  GUARD_SAYS,
  call,
  changed,
  settle,
} from './security-reach-world.js';
import { rawUrl, sampleOf } from './security-reach-samples.js';

/*
 * Class: a kind of caller reaching through some route what its credential should not reach (a
 * folder token listing and purging the whole trash, a read-only token taking locks). Every route
 * declares what each kind of caller reaches (http/reach.ts); this walks every registered route,
 * WebDAV and the command WebSocket included, with a caller of each kind, and checks the answer and
 * the state of the world against the declaration: refused callers change nothing, a folder token
 * changes and reads nothing outside its folder, open routes answer everyone alike. The world is
 * built in security-reach-world.ts, the request of each route is in security-reach-samples.ts.
 */
useReachWorld();

describe('what every caller reaches', () => {
  it('has a request for every route the app registered, and a declaration for each', () => {
    const declared = t.routes.declaredReaches();
    const all = t.routes.entries().flatMap((e) => e.methods.map((m) => `${m} ${e.url}`));
    expect(declared.map((d) => `${d.method} ${d.url}`).sort()).toEqual(all.sort());
    const missing = declared
      .filter((d) => CALLERS.some((c) => !['open'].includes(d.reach[c])))
      .filter((d) => !(d.method === 'GET' && d.url.startsWith('/api/command')))
      .filter((d) => !sampleOf(d.method, d.url))
      .map((d) => `${d.method} ${d.url}`);
    expect(missing).toEqual([]);
  });

  it(
    'answers every route as its declaration says, to every kind of caller',
    { timeout: 600_000 },
    async () => {
      const failures: string[] = [];
      const check = (cond: boolean, what: string) => {
        if (!cond) failures.push(what);
      };
      for (const { method, url, reach } of t.routes.declaredReaches()) {
        const dav = url === '/dav' || url.startsWith('/dav/');
        if (method === 'GET' && url.startsWith('/api/command')) continue; // a WebSocket: below
        const sample = sampleOf(method, url);
        const openStatuses = new Set<number>();
        for (const kind of CALLERS) {
          const label = `${method} ${url} as ${kind}`;
          const want = expected(reach, kind, method);
          const view = kind === 'folderToken' ? folderView : scopeView;
          if (want === 'open') {
            const res = await call(
              kind,
              sample?.inside(world, scopeView) ?? { method, url: rawUrl(url) },
              dav,
            );
            openStatuses.add(res.status);
            check(res.status !== 401, `${label}: an open route asked for a credential (${res.status})`);
            await settle();
            continue;
          }
          if (!sample) {
            failures.push(`${label}: no sample request`);
            continue;
          }
          for (const aim of ['inside', 'outside'] as const) {
            const make = aim === 'inside' ? sample.inside : sample.outside;
            if (!make) continue;
            // Whole-scope callers name outside things as reachable: only the folder token aims out.
            if (aim === 'outside' && want !== 'in folder' && want !== 'share' && want !== 'refused') continue;
            const req = aim === 'inside' ? sample.inside(world, view) : sample.outside!(world);
            // The world is as built (settled after every request): its inventory is the baseline.
            const before = baseline;
            const res = await call(kind, req, dav);
            await sample.after?.(res);
            const after = await inventory();
            const diff = changed(before, after);
            const what = `${label} (${aim}: ${req.method} ${req.url}) → ${res.status} ${res.body.slice(0, 120)}`;
            if (want === 'refused') {
              const refusal = refusalOf(reach, kind, method);
              check(
                res.status === refusal.status || (url.startsWith('/api/public/') && res.status === 404),
                `${what}: expected ${refusal.status}`,
              );
              if (refusal.says && method !== 'HEAD')
                check(res.body.includes(refusal.says), `${what}: should say “${refusal.says}”`);
              check(!diff.inside && !diff.outside, `${what}: a refused request changed something`);
            } else if (
              want === 'allowed' ||
              (want === 'in folder' && aim === 'inside') ||
              (want === 'share' && aim === 'inside')
            ) {
              const okStatuses = sample.ok ?? [];
              check(
                res.status < 400 || okStatuses.includes(res.status),
                `${what}: an allowed caller was not served`,
              );
              check(
                res.status === 401 || !GUARD_SAYS.some((s) => res.body.includes(s)),
                `${what}: refused by the guard`,
              );
              check(res.status !== 401, `${what}: refused as unauthenticated`);
            }
            if (want === 'in folder' || want === 'share') {
              check(!diff.outside, `${what}: changed something outside the folder`);
              if (res.status < 300) {
                check(!res.body.includes(CONTENT), `${what}: answered with a file from outside the folder`);
                const named = req.url.includes(MARK) || String(req.body ?? '').includes(MARK);
                if (!sample.echoes || !named) {
                  check(!res.body.includes(MARK), `${what}: answered with something from outside the folder`);
                }
              }
            }
            if (want === 'share' && aim === 'inside' && kind !== 'shareVisitor') {
              // The link is the credential: an account's own one, sent without the link's token, is not read.
              const bare = { ...req, url: req.url.replace(/[?&]token=[^&]*/, '') };
              const res2 = await call(kind, bare, dav);
              check(res2.status === 401, `${label}: without the link's token → ${res2.status}`);
            }
            await settle(after);
          }
        }
        check(
          openStatuses.size <= 1,
          `${method} ${url}: an open route answered callers differently (${[...openStatuses]})`,
        );
      }
      expect(failures).toEqual([]);
    },
  );

  it('opens the command WebSocket to the callers its declaration lets in, and to no other', async () => {
    const reach = t.routes
      .declaredReaches()
      .find((d) => d.method === 'GET' && d.url === '/api/command/*')!.reach;
    for (const kind of CALLERS) {
      const headers = credentials(kind, false);
      const outcome = await new Promise<number | 'open'>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}/api/command/`, { headers });
        ws.on('unexpected-response', (_req, res) => {
          resolve(res.statusCode ?? 0);
          res.resume();
          ws.terminate();
        });
        ws.on('open', () => {
          resolve('open');
          ws.close();
        });
        ws.on('error', (err) => {
          if (!/Unexpected server response/.test(err.message)) reject(err);
        });
      });
      const want = expected(reach, kind, 'GET');
      expect(outcome, kind).toBe(want === 'refused' ? refusalOf(reach, kind, 'GET').status : 'open');
    }
  });
});

describe('a route without a declaration', () => {
  it('stops the server from starting, and so does one the policy could not serve as declared', async () => {
    const base = await fs.mkdtemp(path.join(t.base, 'undeclared-'));
    const store = await openStore(path.join(base, 'db', 'filebrowser.db'));
    try {
      const { app } = await buildApp(
        {
          ...defaultConfig(),
          root: base,
          database: path.join(base, 'db', 'filebrowser.db'),
          cacheDir: base,
          webDist: path.join(base, 'web'),
        },
        store,
      );
      expect(() => app.get('/api/undeclared', async () => 'x')).toThrow(/declares no reach for its callers/);
      expect(() =>
        app.post(
          '/api/writes',
          { config: { reach: { ...FILE_CHANGES, readOnlyToken: 'account' } } },
          async () => 'x',
        ),
      ).toThrow(/read-only tokens cannot reach a route that only changes things/);
      expect(() =>
        app.get(
          '/api/admin-thing',
          { config: { reach: { ...FILE_CHANGES, readOnlyToken: 'refused' }, needs: 'admin' } },
          async () => 'x',
        ),
      ).toThrow(/folder tokens withhold admin/);
      expect(() => app.get('/api/fine', { config: { reach: OPEN } }, async () => 'x')).not.toThrow();
      await app.close();
    } finally {
      await store.close();
    }
  });
});
