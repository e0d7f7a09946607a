import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Type } from '@sinclair/typebox';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Window } from 'happy-dom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { defaultConfig } from '../src/config/defaults.js';
import { DOCS_HTML, DOCS_SCRIPT } from '../src/http/openapi/docs-page.js';
import { OTHER_METHODS_KEY, openApiPath } from '../src/http/openapi/document.js';
import { OPEN } from '../src/http/reach.js';
import { openStore } from '../src/store/index.js';
import { startFilesApp, type FilesApp } from './files-helpers.js';
import { answerCheck } from './openapi-check.js';

interface Operation {
  parameters?: { name: string; in: string; schema: object }[];
  requestBody?: { content: Record<string, { schema?: object }> };
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}
interface Doc {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, unknown>>;
}

const operationOf = (doc: Doc, url: string, method: string): Operation | undefined => {
  const item = doc.paths[openApiPath(url).path];
  return (item?.[method.toLowerCase()] ??
    (item?.[OTHER_METHODS_KEY] as Record<string, unknown> | undefined)?.[method]) as Operation | undefined;
};

/** Every route the app registered, with each of its methods. */
const everyRoute = (t: FilesApp) =>
  t.routes.entries().flatMap((r) => r.methods.map((m) => ({ url: r.url, m })));

describe.each([
  ['metrics off', {}],
  ['metrics on the main listener', { metrics: true }],
])('the API document (%s)', (_name, config) => {
  let t: FilesApp;
  let doc: Doc;
  beforeAll(async () => {
    t = await startFilesApp(config);
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    doc = res.json<Doc>();
  });
  afterAll(() => t.close());

  it('is OpenAPI 3.1 and needs no sign-in', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toMatch(/^\d/);
  });

  it('has every registered route, with each of its methods', () => {
    const missing = everyRoute(t).filter(({ url, m }) => !operationOf(doc, url, m));
    expect(missing).toEqual([]);
    expect(everyRoute(t).length).toBeGreaterThan(40);
  });

  it('has nothing that is not a route', () => {
    const documented = Object.entries(doc.paths).flatMap(([p, item]) =>
      Object.keys({ ...item, ...(item[OTHER_METHODS_KEY] as object) })
        .filter((k) => k !== OTHER_METHODS_KEY)
        .map((m) => `${m.toUpperCase()} ${p}`),
    );
    const registered = new Set(everyRoute(t).map(({ url, m }) => `${m} ${openApiPath(url).path}`));
    expect(documented.filter((d) => !registered.has(d))).toEqual([]);
  });

  it('gives every route declared answers and every path parameter a schema', () => {
    const undeclared: string[] = [];
    for (const { url, m } of everyRoute(t)) {
      const op = operationOf(doc, url, m)!;
      if (Object.keys(op.responses).every((code) => code === 'default'))
        undeclared.push(`${m} ${url}: answers`);
      const declared = new Set((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name));
      for (const name of openApiPath(url).names) {
        if (!declared.has(name)) undeclared.push(`${m} ${url}: path parameter ${name}`);
      }
    }
    expect(undeclared).toEqual([]);
  });

  it('holds only schemas that compile as JSON Schema 2020-12', () => {
    const ajv = new Ajv2020({ strict: false });
    const schemas: object[] = [];
    for (const item of Object.values(doc.paths)) {
      const ops = [...Object.entries(item), ...Object.entries((item[OTHER_METHODS_KEY] as object) ?? {})];
      for (const [key, op] of ops) {
        if (key === OTHER_METHODS_KEY) continue;
        const o = op as Operation;
        for (const p of o.parameters ?? []) schemas.push(p.schema);
        for (const c of Object.values(o.requestBody?.content ?? {})) if (c.schema) schemas.push(c.schema);
        for (const r of Object.values(o.responses)) {
          for (const c of Object.values(r.content ?? {})) if (c.schema) schemas.push(c.schema);
        }
      }
    }
    expect(schemas.length).toBeGreaterThan(50);
    for (const s of schemas) expect(() => ajv.compile(s)).not.toThrow();
  });

  it('describes raw answers by their media type, without a JSON schema', () => {
    const raw = operationOf(doc, '/api/raw/*', 'GET')!;
    expect(raw.responses['200']!.content).toHaveProperty(['*/*']);
    expect(raw.responses['200']!.content!['*/*']!.schema).toBeUndefined();
    const upload = operationOf(doc, '/api/resources/*', 'POST')!;
    expect(upload.requestBody!.content).toHaveProperty(['application/octet-stream']);
    const users = operationOf(doc, '/api/users', 'GET')!;
    expect(users.responses['200']!.content!['application/json']!.schema).toMatchObject({ type: 'array' });
  });
});

describe('the page of the API document', () => {
  let t: FilesApp;
  beforeAll(async () => {
    t = await startFilesApp();
  });
  afterAll(() => t.close());

  it('is HTML whose script comes from this server, under the CSP every answer has', async () => {
    const page = await t.app.inject({ method: 'GET', url: '/api/docs' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.body).toContain('<script src="docs/render.js"></script>');
    const script = await t.app.inject({ method: 'GET', url: '/api/docs/render.js' });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
    expect(script.body).toContain("fetch('openapi.json'");
    // The page builds its content from text nodes only.
    expect(script.body).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it('draws every operation of the document, as text', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/openapi.json' });
    const window = new Window({ url: 'http://localhost/api/docs' });
    try {
      window.document.write(DOCS_HTML.replace(/<script[^>]*><\/script>/, ''));
      // The page's one request, answered with the server's document.
      const fetch = async (url: string) => {
        expect(url).toBe('openapi.json');
        return { json: async () => JSON.parse(res.body) as unknown };
      };
      const page = { document: window.document } as { document: unknown; apiDocsDrawn?: Promise<void> };
      new Function('window', 'document', 'fetch', DOCS_SCRIPT)(page, window.document, fetch);
      await page.apiDocsDrawn;
      const summaries = [...window.document.querySelectorAll('summary')].map((s) => s.textContent);
      expect(summaries.length).toBeGreaterThan(100);
      expect(summaries).toContain('GET/api/users — every user (administrators)');
      expect(summaries).toContain(
        'PROPFIND/dav/{path} — ' +
          'WebDAV (RFC 4918 class 1 and 2) on the user’s scope: Basic auth, password or API token',
      );
      expect(window.document.getElementById('title')!.textContent).toMatch(/^File Browser API \d/);
    } finally {
      await window.happyDOM.close();
    }
  });

  it('is served under the base URL too', async () => {
    const based = await startFilesApp({ baseURL: '/files' });
    try {
      const res = await based.app.inject({ method: 'GET', url: '/files/api/openapi.json' });
      expect(res.statusCode).toBe(200);
      expect(res.json<{ servers: { url: string }[] }>().servers).toEqual([{ url: '/files' }]);
    } finally {
      await based.close();
    }
  });

  it('declares queries that take a repeated value as File Browser did: the first counts', async () => {
    const token = await t.user('repeats');
    await fs.writeFile(path.join(t.root, 'repeats', 'a.txt'), 'a');
    const res = await t.get(token, '/api/raw/a.txt?inline=true&inline=false');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toMatch(/^inline/);
  });

  it('answers a write to the document with 405, not a change', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/openapi.json', payload: {} });
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toContain('GET');
  });
});

describe('the answer check of the tests', () => {
  it('fails an answer that does not validate against its declared schema', async () => {
    const base = await fs.mkdtemp(path.join(os.tmpdir(), 'fb-openapi-'));
    const store = await openStore(path.join(base, 'db', 'filebrowser.db'));
    const check = answerCheck();
    const { app } = await buildApp(
      {
        ...defaultConfig(),
        root: base,
        database: path.join(base, 'db', 'filebrowser.db'),
        cacheDir: base,
        webDist: path.join(base, 'web'),
      },
      store,
      { onSend: check.onSend },
    );
    check.install(app);
    // Declared as an object of strings, answered with a number, serialized as is.
    app.get(
      '/api/wrong',
      {
        config: { reach: OPEN },
        schema: { response: { 200: Type.Object({ name: Type.String() }) } },
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      async () => ({ name: 12 }),
    );
    app.get('/api/undeclared', { config: { reach: OPEN } }, async (_request, reply) =>
      reply.code(201).send('x'),
    );
    try {
      await app.ready();
      await expect(app.inject({ method: 'GET', url: '/api/wrong' })).rejects.toThrow(
        /^the answer is not as the API document says: GET \/api\/wrong → 200: data\/name must be string/,
      );
      await expect(app.inject({ method: 'GET', url: '/api/undeclared' })).rejects.toThrow(
        'GET /api/undeclared → 201: status not in the API document',
      );
      expect((await app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await store.close();
      await fs.rm(base, { recursive: true, force: true });
    }
  });
});
