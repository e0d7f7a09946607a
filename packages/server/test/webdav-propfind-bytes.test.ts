import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * PROPFIND answers byte for byte as the answers the server gave before they were streamed from
 * the listing's rows (`fixtures/propfind-answers.json`, written by the server of main `a5570ce` with
 * `UPDATE_PROPFIND_ANSWERS=1`): hostile names, folders, dead properties, locks, Depth 0 and 1,
 * allprop, propname and prop, and a folder larger than one piece of the answer. What differs from
 * run to run is replaced first: the requested resource's own creation date (its birth time),
 * lock tokens and the seconds a lock has left.
 */
const ANSWERS = new URL('./fixtures/propfind-answers.json', import.meta.url);
const HOST = 'dav.test';
const basic = 'Basic ' + Buffer.from(`ann:${PASSWORD}`).toString('base64');

let t: FilesApp;
const file = (...p: string[]) => path.join(t.root, 'ann', 'pf', ...p);

const dav = (method: string, url: string, body?: string, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: method as 'GET',
    url,
    headers: { host: HOST, authorization: basic, ...headers },
    ...(body !== undefined && { payload: body }),
  });

/** Names a file system takes that XML, URLs or both must escape. */
const HOSTILE = [
  'plain.txt',
  'a&b<c>.md',
  `quote"s'.txt`,
  'ctl\u0001char.txt',
  'space name.pdf',
  '100%.bin',
  '#hash?.txt',
  'été ü.txt',
  'emoji 😀.png',
  'odd\uFFFEchar',
  'no-extension',
  'empty.json',
  ']]>cdata.xml',
];

const PATCH = (ns: string, name: string, value: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="${ns}"><D:set><D:prop><Z:${name}>${value}</Z:${name}></D:prop></D:set></D:propertyupdate>`;
const LOCKINFO = (depth: string) => ({
  body: `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner><D:href>mailto:ann&amp;co@example.com</D:href></D:owner></D:lockinfo>`,
  headers: { depth, timeout: 'Second-3600' },
});
const ALLPROP = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>';
const PROPNAME = '<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:propname/></D:propfind>';
const SOME =
  '<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:z" xmlns:Q="urn:q&amp;&lt;"><D:prop>' +
  '<D:getetag/><D:displayname/><D:resourcetype/><D:getcontentlength/><Z:color/><D:lockdiscovery/>' +
  '<Q:unknown/><D:nonexistent/><D:getlastmodified/><D:creationdate/><D:supportedlock/><D:getcontenttype/>' +
  '<none xmlns=""/></D:prop></D:propfind>';

const CASES: Array<{ name: string; url: string; depth: string; body?: string }> = [
  { name: 'folder, Depth 1, no body', url: '/dav/pf/', depth: '1' },
  { name: 'folder, Depth 1, allprop', url: '/dav/pf/', depth: '1', body: ALLPROP },
  { name: 'folder, Depth 1, propname', url: '/dav/pf/', depth: '1', body: PROPNAME },
  { name: 'folder, Depth 1, prop', url: '/dav/pf/', depth: '1', body: SOME },
  { name: 'folder, Depth 0, allprop', url: '/dav/pf/', depth: '0', body: ALLPROP },
  { name: 'folder, Depth 0, prop', url: '/dav/pf/', depth: '0', body: SOME },
  { name: 'locked folder, Depth 1, allprop', url: '/dav/pf/sub%20dir/', depth: '1', body: ALLPROP },
  { name: 'file, Depth 0, allprop', url: '/dav/pf/a%26b%3Cc%3E.md', depth: '0', body: ALLPROP },
  { name: 'file, Depth 1, prop', url: '/dav/pf/plain.txt', depth: '1', body: SOME },
  { name: 'file, Depth 0, propname', url: '/dav/pf/plain.txt', depth: '0', body: PROPNAME },
  { name: 'folder of 300, Depth 1, allprop', url: '/dav/pf/many/', depth: '1', body: ALLPROP },
  { name: 'folder of 300, Depth 1, prop', url: '/dav/pf/many/', depth: '1', body: SOME },
];

/** The answer with what differs between two runs of the same server replaced. */
function normalized(res: LightMyRequestResponse): string {
  let first = true;
  return res.body
    .replace(/<D:creationdate>[^<]*<\/D:creationdate>/, (m) => {
      // only the requested resource's own: its children's come from their modification times
      if (!first) return m;
      first = false;
      return '<D:creationdate>BIRTH</D:creationdate>';
    })
    .replace(/opaquelocktoken:[0-9a-f-]+/g, 'opaquelocktoken:TOKEN')
    .replace(/Second-\d+/g, 'Second-LEFT');
}

beforeAll(async () => {
  t = await startFilesApp();
  await t.user('ann', { scope: '/ann' });
  await fs.mkdir(file('sub dir'), { recursive: true });
  await fs.mkdir(file('many'));
  await fs.mkdir(file('z folder & co'));
  for (const [i, name] of HOSTILE.entries()) await fs.writeFile(file(name), 'x'.repeat(i * 37));
  await fs.writeFile(file('sub dir', 'inner.txt'), 'inside');
  for (let i = 0; i < 300; i++) {
    const name = i % 7 === 0 ? `dir-${i}` : `file <${i}> & "more".${['txt', 'jpg', 'mp4', 'go', ''][i % 5]}`;
    if (i % 7 === 0) await fs.mkdir(file('many', name));
    else await fs.writeFile(file('many', name), Buffer.alloc(i * 13, i));
  }
  const patched = [
    await dav('PROPPATCH', '/dav/pf/a%26b%3Cc%3E.md', PATCH('urn:z', 'color', 'blue &amp; &lt;green&gt;')),
    await dav('PROPPATCH', '/dav/pf/a%26b%3Cc%3E.md', PATCH('urn:other', 'tag', '<inner a="1">t</inner>')),
    await dav('PROPPATCH', '/dav/pf/', PATCH('urn:z', 'color', 'the folder')),
    await dav('PROPPATCH', '/dav/pf/sub%20dir/', PATCH('urn:z', 'color', '')),
    await dav(
      'PROPPATCH',
      '/dav/pf/many/file%20%3C1%3E%20%26%20%22more%22.jpg',
      PATCH('urn:z', 'color', 'red'),
    ),
  ];
  for (const res of patched) expect(res.statusCode, res.body).toBe(207);
  const locked = [
    await dav('LOCK', '/dav/pf/plain.txt', LOCKINFO('0').body, LOCKINFO('0').headers),
    await dav('LOCK', '/dav/pf/sub%20dir/', LOCKINFO('infinity').body, LOCKINFO('infinity').headers),
  ];
  for (const res of locked) expect(res.statusCode, res.body).toBe(200);
  // Times with nanoseconds, all different, set last (folders' own included).
  const stamp = async (p: string, i: number) => {
    const sec = 1_700_000_000 + i * 3_601 + i / 7;
    await fs.utimes(p, sec, sec);
  };
  for (const [i, name] of HOSTILE.entries()) await stamp(file(name), i);
  for (const [i, name] of (await fs.readdir(file('many'))).entries()) await stamp(file('many', name), i + 50);
  await stamp(file('sub dir', 'inner.txt'), 400);
  await stamp(file('sub dir'), 401);
  await stamp(file('z folder & co'), 402);
  await stamp(file('many'), 403);
  await stamp(file(), 404);
});
afterAll(() => t.close());

describe('PROPFIND answers', () => {
  it('are byte for byte those of the server before streaming from the rows', async () => {
    const answers: Record<string, { sha256: string; bytes: number; text?: string }> = {};
    for (const c of CASES) {
      const res = await dav('PROPFIND', c.url, c.body, { depth: c.depth });
      expect(res.statusCode, res.body).toBe(207);
      expect(res.headers['content-type']).toBe('application/xml; charset=utf-8');
      const text = normalized(res);
      answers[c.name] = {
        sha256: crypto.createHash('sha256').update(text).digest('hex'),
        bytes: Buffer.byteLength(text),
        // the large ones by their hash alone, to keep the file readable
        ...(text.length < 20_000 && { text }),
      };
    }
    if (process.env.UPDATE_PROPFIND_ANSWERS) {
      await fs.writeFile(ANSWERS, JSON.stringify(answers, null, 2) + '\n');
    }
    const expected = JSON.parse(await fs.readFile(ANSWERS, 'utf8')) as typeof answers;
    for (const c of CASES) expect(answers[c.name], c.name).toEqual(expected[c.name]);
    // each case once: a case missing from the file would otherwise compare undefined with undefined
    expect(Object.keys(expected).sort()).toEqual(CASES.map((c) => c.name).sort());
  });

  it('escape every hostile name in its href and displayname', async () => {
    const res = await dav('PROPFIND', '/dav/pf/', ALLPROP, { depth: '1' });
    for (const name of [
      'a&#38;b&#60;c&#62;.md',
      'quote&#34;s&#39;.txt',
      'ctl\uFFFDchar.txt',
      ']]&#62;cdata.xml',
      'odd\uFFFDchar',
    ])
      expect(res.body).toContain(`<D:displayname>${name}</D:displayname>`);
    expect(res.body).toContain('<D:href>/dav/pf/a%26b%3Cc%3E.md</D:href>');
    expect(res.body).toContain('<D:href>/dav/pf/%23hash%3F.txt</D:href>');
    expect(res.body).not.toContain('\u0001');
  });
});
