import fs from 'node:fs/promises';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach } from 'vitest';
import { PASSWORD, startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * What the WebDAV tests share: a files app started for each test, and requests to /dav/ as clients
 * send them.
 */

export let t: FilesApp;
export const HOST = 'dav.test';

export const basic = (user: string, password = PASSWORD) =>
  'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');

export interface DavOptions {
  headers?: Record<string, string>;
  body?: string | Buffer;
  user?: string;
  password?: string;
}

export function dav(method: string, url: string, opts: DavOptions = {}): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: method as 'GET',
    url,
    headers: {
      host: HOST,
      ...(opts.user !== undefined && { authorization: basic(opts.user, opts.password) }),
      ...opts.headers,
    },
    ...(opts.body !== undefined && { payload: opts.body }),
  });
}

export const file = (...p: string[]) => path.join(t.root, ...p);
export const read = (...p: string[]) => fs.readFile(file(...p), 'utf8');
export const exists = (...p: string[]) =>
  fs.lstat(file(...p)).then(
    () => true,
    () => false,
  );

/** Names in a 207 answer's hrefs. */
export const hrefs = (body: string) => [...body.matchAll(/<D:href>([^<]*)<\/D:href>/g)].map((m) => m[1]!);

export const PROPPATCH = (name: string, value: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:Z="urn:z"><D:set><D:prop><Z:${name}>${value}</Z:${name}></D:prop></D:set></D:propertyupdate>`;
export const PROPGET = (name: string) =>
  `<?xml version="1.0"?><D:propfind xmlns:D="DAV:" xmlns:Z="urn:z"><D:prop><Z:${name}/></D:prop></D:propfind>`;
export const LOCKINFO = `<?xml version="1.0"?><D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>me</D:owner></D:lockinfo>`;

/** Starts the app before the tests of the file that calls it and closes it after. */
export function useDavApp(): void {
  beforeEach(async () => {
    t = await startFilesApp();
  });
  afterEach(async () => {
    await t.close();
  });
}

/** Replaces `t` for the rest of the test (the file's hooks close what it holds then). */
export function setT(value: FilesApp): void {
  t = value;
}
