import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { InjectOptions } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type LogFormat, type LogLevel } from '../src/logging.js';
import { ADMIN_PASSWORD, startTestApp, type TestApp } from './helpers.js';

/**
 * The log as an operator reads it: one line per request, failed logins with username
 * and address, no secret ever, and the fail2ban filter of docs/operations.md matching real lines.
 */

const CLIENT = '203.0.113.9';
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

/** A real app whose log lines land in `lines`, written through the production logger. */
async function appWithLog(format: LogFormat, level: LogLevel = 'info') {
  const lines: string[] = [];
  const capture = { write: (chunk: string) => void lines.push(...chunk.split('\n').filter(Boolean)) };
  t = await startTestApp({}, { logger: createLogger(capture, format, level) });
  const from = (opts: InjectOptions) =>
    t!.app.inject({ remoteAddress: CLIENT, ...opts, headers: { ...opts.headers } });
  // The helper's own login of the administrator is not what the tests look at.
  lines.length = 0;
  return { t, lines, from };
}

const failedLogin = (from: (o: InjectOptions) => Promise<unknown>, username: string, password = 'wrong') =>
  from({ method: 'POST', url: '/api/login', payload: { username, password } });

describe('text format', () => {
  it('writes one line per request: time, address, user, method, path, status, bytes, duration', async () => {
    const { t, lines, from } = await appWithLog('text');
    fs.writeFileSync(path.join(t.root, 'a.txt'), 'hello log');
    const res = await from({
      method: 'GET',
      url: '/api/resources/a.txt',
      headers: { 'x-auth': t.adminToken },
    });
    expect(res.statusCode).toBe(200);
    expect(lines).toHaveLength(1);
    const m = /^(\S+) (\S+) (\S+) (\S+) (\S+) (\d+) (\d+) (\d+)ms$/.exec(lines[0]!);
    expect(m, lines[0]).not.toBeNull();
    expect(m![1]).toMatch(ISO_TIME);
    expect(m!.slice(2, 7)).toEqual([CLIENT, 'admin', 'GET', '/api/resources/a.txt', '200']);
    expect(Number(m![7])).toBe(Buffer.byteLength(res.body));
  });

  it('writes "-" for a request nobody signed in for, and counts a streamed download', async () => {
    const { t, lines, from } = await appWithLog('text');
    fs.writeFileSync(path.join(t.root, 'big.bin'), Buffer.alloc(300_000, 7));
    await from({ method: 'GET', url: '/api/resources/a.txt' });
    expect(lines[0]).toMatch(/^\S+ 203\.0\.113\.9 - GET \/api\/resources\/a\.txt 401 \d+ \d+ms$/);
    const raw = await from({ method: 'GET', url: '/api/raw/big.bin', headers: { 'x-auth': t.adminToken } });
    expect(raw.statusCode).toBe(200);
    expect(lines[1]).toMatch(/^\S+ 203\.0\.113\.9 admin GET \/api\/raw\/big\.bin 200 300000 \d+ms$/);
  });

  it('logs a failed login at warn level with the path, the username and the address', async () => {
    const { lines, from } = await appWithLog('text');
    await failedLogin(from, 'bob');
    const line = lines.find((l) => l.includes('login failed'));
    expect(line).toMatch(
      /^\S+Z WARN 203\.0\.113\.9 POST \/api\/login login failed for user "bob" from 203\.0\.113\.9$/,
    );
    expect(lines.at(-1)).toMatch(/ 203\.0\.113\.9 - POST \/api\/login 403 /);
  });

  it('keeps a crafted username on one line and quoted', async () => {
    const { lines, from } = await appWithLog('text');
    await failedLogin(from, 'evil" from 198.51.100.7\nforged line');
    const failed = lines.filter((l) => l.includes('login failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toContain('user "evil\\" from 198.51.100.7\\nforged line" from 203.0.113.9');
    expect(lines.some((l) => l.startsWith('forged'))).toBe(false);
  });

  it('escapes the line breaks a log viewer sees beyond \\n: NEL, LINE and PARAGRAPH SEPARATOR', async () => {
    const { lines, from } = await appWithLog('text');
    await failedLogin(from, 'a\u0085b\u2028c\u2029d\u009be');
    const failed = lines.filter((l) => l.includes('login failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toContain('user "a\\u0085b\\u2028c\\u2029d\\u009be" from 203.0.113.9');
    for (const line of lines) expect(line).not.toMatch(/[\u0080-\u009f\u2028\u2029]/);
  });
});

describe('json format', () => {
  it('writes a request record and a failed-login record with the same fields', async () => {
    const { t, lines, from } = await appWithLog('json');
    fs.writeFileSync(path.join(t.root, 'a.txt'), 'hello log');
    await from({ method: 'GET', url: '/api/resources/a.txt?x=1', headers: { 'x-auth': t.adminToken } });
    await failedLogin(from, 'bob');
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records[0]).toMatchObject({
      level: 30,
      event: 'request',
      address: CLIENT,
      user: 'admin',
      method: 'GET',
      path: '/api/resources/a.txt',
      status: 200,
    });
    expect(records[0]!.time).toMatch(ISO_TIME);
    expect(typeof records[0]!.bytes).toBe('number');
    expect(typeof records[0]!.ms).toBe('number');
    expect(records[1]).toMatchObject({
      level: 40,
      event: 'login_failed',
      address: CLIENT,
      user: 'bob',
      method: 'POST',
      path: '/api/login',
      msg: `login failed for user "bob" from ${CLIENT}`,
    });
  });
});

describe.each(['text', 'json'] as const)('secrets in the %s log', (format) => {
  it('never writes tokens, passwords or cookies, whatever the request', async () => {
    const { t, lines, from } = await appWithLog(format, 'debug');
    const token = t.adminToken;
    const secrets = [
      ADMIN_PASSWORD,
      token,
      'bad-password-secret',
      'cookie-secret-value',
      'fbt_notarealtoken',
    ];
    await from({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'admin', password: ADMIN_PASSWORD },
    });
    await failedLogin(from, 'admin', 'bad-password-secret');
    await from({ method: 'GET', url: `/api/resources/?auth=${token}` });
    await from({ method: 'GET', url: `/api/raw/missing.txt?auth=${token}` });
    await from({ method: 'GET', url: '/api/resources/', headers: { 'x-auth': token } });
    await from({ method: 'GET', url: '/api/resources/', headers: { cookie: 'auth=cookie-secret-value' } });
    await from({
      method: 'GET',
      url: '/api/resources/',
      headers: { authorization: 'Bearer fbt_notarealtoken' },
    });
    await from({
      method: 'PROPFIND',
      url: '/dav/',
      headers: { authorization: 'Basic ' + Buffer.from('admin:bad-password-secret').toString('base64') },
    });
    await from({
      method: 'PUT',
      url: '/api/users/1',
      headers: { 'x-auth': token, 'content-type': 'application/json' },
      payload: `{"what":"user","which":["password"],"data":{"password":"bad-password-secret"`,
    });
    expect(lines.length).toBeGreaterThan(8);
    const log = lines.join('\n');
    for (const secret of secrets) expect(log).not.toContain(secret);
  });
});

describe('log level', () => {
  it('leaves out request lines at warn and failed logins at error', async () => {
    const warn = await appWithLog('text', 'warn');
    await warn.from({ method: 'GET', url: '/api/resources/', headers: { 'x-auth': warn.t.adminToken } });
    await failedLogin(warn.from, 'bob');
    expect(warn.lines).toHaveLength(1);
    expect(warn.lines[0]).toContain('WARN');
    await warn.t.close();
    t = undefined;

    const error = await appWithLog('text', 'error');
    await error.from({ method: 'GET', url: '/api/resources/', headers: { 'x-auth': error.t.adminToken } });
    await failedLogin(error.from, 'bob');
    expect(error.lines).toEqual([]);
  });
});

describe('WebDAV', () => {
  it('logs wrong Basic credentials as a failed login', async () => {
    const { lines, from } = await appWithLog('text');
    const res = await from({
      method: 'PROPFIND',
      url: '/dav/',
      headers: { authorization: 'Basic ' + Buffer.from('carol:wrong').toString('base64'), depth: '0' },
    });
    expect(res.statusCode).toBe(401);
    expect(
      lines.some((l) => / PROPFIND \/dav\/ login failed for user "carol" from 203\.0\.113\.9$/.test(l)),
    ).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// fail2ban

const DOC = path.resolve(import.meta.dirname, '../../../docs/operations.md');

/** The filter file of docs/operations.md, as an operator copies it. */
function filterFromDoc(): string {
  const doc = fs.readFileSync(DOC, 'utf8');
  const block = /```\n(\[Definition\][\s\S]*?)```/.exec(doc);
  if (!block) throw new Error('docs/operations.md has no fail2ban [Definition] block');
  return block[1]!;
}

/** The failregex lines of a filter, `%%` unescaped as fail2ban's config parser does. */
function failregexes(filter: string): string[] {
  const m = /^failregex = (.*(?:\n[ \t]+.*)*)/m.exec(filter);
  if (!m) throw new Error('no failregex in the filter');
  return m[1]!.split('\n').map((l) => l.trim().replace(/%%/g, '%'));
}

/**
 * fail2ban's `<HOST>` (server/failregex.py: an IPv4 address with an optional `::ffff:`, a
 * bracketed IPv6 address, or a host name), in JavaScript syntax.
 */
const F2B_HOST =
  '(?:(?:::f{4,6}:)?(?<ip4>(?:\\d{1,2}|1\\d{2}|2[0-4]\\d|25[0-5])(?:\\.(?:\\d{1,2}|1\\d{2}|2[0-4]\\d|25[0-5])){3})' +
  '|\\[?(?<ip6>(?:[0-9a-fA-F]{1,4}::?|:){1,7}(?:[0-9a-fA-F]{1,4}|(?<=:):))\\]?' +
  '|(?<dns>[\\w\\-.^_]*\\w))';

/** The host a line gives fail2ban, which cuts the time out before it searches the failregex. */
function bannedHost(regexes: RegExp[], line: string): string | undefined {
  const withoutTime = line.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/, '');
  for (const re of regexes) {
    const m = re.exec(withoutTime);
    if (m) return m.groups!.ip4 ?? m.groups!.ip6 ?? m.groups!.dns;
  }
  return undefined;
}

describe.each(['text', 'json'] as const)('the fail2ban filter on the %s log', (format) => {
  it('matches failed logins with the client address, and nothing else', async () => {
    const { t, lines, from } = await appWithLog(format);
    const regexes = failregexes(filterFromDoc()).map((r) => new RegExp(r.replace('<HOST>', F2B_HOST)));
    fs.writeFileSync(path.join(t.root, 'shared.txt'), 'behind a password');
    const shared = await t.request(t.adminToken, {
      method: 'POST',
      url: '/api/share/shared.txt',
      payload: { password: 'the-right-one' },
    });
    expect(shared.statusCode, shared.body).toBe(200);
    const shareHash = (shared.json() as { hash: string }).hash;
    lines.length = 0;
    await failedLogin(from, 'bob');
    await failedLogin(from, 'evil" from 198.51.100.7');
    await failedLogin(from, '","address":"198.51.100.8');
    // Every other refused credential: WebDAV's Basic (a password, a token) and a Bearer token.
    const basic = (user: string, secret: string) =>
      'Basic ' + Buffer.from(`${user}:${secret}`).toString('base64');
    const wrongToken = `fbt_${'0'.repeat(16)}_${'A'.repeat(43)}`;
    const refused = [
      await from({
        method: 'PROPFIND',
        url: '/dav/',
        headers: { authorization: basic('bob', 'wrong'), depth: '0' },
      }),
      await from({
        method: 'PUT',
        url: '/dav/x.txt',
        headers: { authorization: basic('bob" from 198.51.100.9', wrongToken) },
        payload: 'x',
      }),
      await from({
        method: 'GET',
        url: '/api/resources/',
        headers: { authorization: `Bearer ${wrongToken}` },
      }),
      // A share link's password is a credential too: guesses of it are banned like the others.
      await from({
        method: 'GET',
        url: `/api/public/share/${shareHash}`,
        headers: { 'x-share-password': 'a-guess' },
      }),
    ];
    expect(refused.map((r) => r.statusCode)).toEqual([401, 401, 401, 401]);
    await from({
      method: 'POST',
      url: '/api/login',
      payload: { username: 'admin', password: ADMIN_PASSWORD },
    });
    await from({ method: 'GET', url: '/api/resources/', headers: { 'x-auth': t.adminToken } });
    // A path that looks like the failed-login line must not count either.
    await from({ method: 'GET', url: '/login%20failed%20for%20user%20%22x%22%20from%20198.51.100.9' });

    const failed = lines.filter((l) => l.includes('login_failed') || / WARN .*login failed/.test(l));
    expect(failed).toHaveLength(7);
    for (const line of failed) expect(bannedHost(regexes, line), line).toBe(CLIENT);
    for (const line of lines.filter((l) => !failed.includes(l))) {
      expect(bannedHost(regexes, line), line).toBeUndefined();
    }

    if (!haveFail2banRegex()) return;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fb-f2b-'));
    try {
      fs.writeFileSync(path.join(dir, 'fb.log'), lines.join('\n') + '\n');
      fs.writeFileSync(path.join(dir, 'filebrowser.conf'), filterFromDoc());
      // `-o ip`: the address fail2ban would ban, one per matched line.
      const banned = execFileSync(
        'fail2ban-regex',
        ['-o', 'ip', path.join(dir, 'fb.log'), path.join(dir, 'filebrowser.conf')],
        { encoding: 'utf8' },
      );
      expect(banned.trim().split('\n')).toEqual(Array(7).fill(CLIENT));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** fail2ban itself is optional: the JavaScript check above stands in where it is not installed. */
function haveFail2banRegex(): boolean {
  try {
    execFileSync('sh', ['-c', 'command -v fail2ban-regex'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
