import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultImageProcessors, threadPoolSize } from '../src/config/defaults.js';
import { openStore } from '../src/store/index.js';
import { useConfigFolder, dir, places, cli, load, loadError } from './cli-config-helpers.js';

/**
 * Options from flags, FB_* variables, config files and the database, `config init`, `set` and
 * `cat`, and where options come from. `config export` and `import` are in
 * cli-config-export.test.ts.
 */
useConfigFolder();

describe('defaultImageProcessors', () => {
  const saved = process.env.UV_THREADPOOL_SIZE;
  afterEach(() => {
    if (saved === undefined) delete process.env.UV_THREADPOOL_SIZE;
    else process.env.UV_THREADPOOL_SIZE = saved;
  });

  it('leaves two of the thread pool’s threads to file operations, whatever the cores', () => {
    delete process.env.UV_THREADPOOL_SIZE;
    expect(threadPoolSize()).toBe(4);
    expect(defaultImageProcessors()).toBe(Math.min(2, os.availableParallelism()));
    process.env.UV_THREADPOOL_SIZE = '3';
    expect(defaultImageProcessors()).toBe(1);
    process.env.UV_THREADPOOL_SIZE = '64';
    expect(threadPoolSize()).toBe(64);
    expect(defaultImageProcessors()).toBe(Math.min(4, os.availableParallelism()));
    process.env.UV_THREADPOOL_SIZE = 'lots';
    expect(threadPoolSize()).toBe(4);
  });
});

describe('loadConfig', () => {
  it('has File Browser defaults, an absolute root and the built web app', () => {
    const c = load([]);
    expect(c).toMatchObject({
      root: dir,
      database: path.join(dir, 'filebrowser.db'),
      address: '127.0.0.1',
      port: 8080,
      baseURL: '',
      log: 'stdout',
      tokenExpirationTime: 7200,
      disableExec: true,
      imageProcessors: Math.max(1, Math.min(4, os.availableParallelism(), threadPoolSize() - 2)),
    });
    expect(c.webDist).toMatch(/web[/\\]dist$/);
    expect(load(['-r', 'files']).root).toBe(path.join(dir, 'files'));
  });

  it('reads every kind of flag, with --flag=value and --flag=false for booleans', () => {
    const c = load([
      '--port=9000',
      '-a',
      '0.0.0.0',
      '-b',
      'files/',
      '--tokenExpirationTime',
      '1h30m',
      '--disableExec=false',
      '--disableThumbnails',
      '--followExternalSymlinks=true',
      '--imageProcessors',
      '2',
      '--trustedProxies',
      '10.0.0.0/8, ::1',
      '--loginRateLimit=3',
      '--socketPerm',
      '0600',
    ]);
    expect(c).toMatchObject({
      port: 9000,
      address: '0.0.0.0',
      baseURL: '/files',
      tokenExpirationTime: 5400,
      disableExec: false,
      disableThumbnails: true,
      followExternalSymlinks: true,
      imageProcessors: 2,
      trustedProxies: ['10.0.0.0/8', '::1'],
      loginRateLimit: 3,
      socketPerm: 0o600,
    });
  });

  it('takes a flag over FB_* over the config file over the database over the default', () => {
    fs.writeFileSync(
      path.join(dir, '.filebrowser.json'),
      JSON.stringify({ port: 7001, address: '10.1.1.1', baseURL: '/file', log: 'file.log', root: 'files' }),
    );
    const persisted = { port: '7000', address: '10.0.0.9', baseURL: '/db', log: 'stderr', tlsCert: '' };
    const env = { FB_PORT: '7002', FB_ADDRESS: '10.2.2.2' };
    const c = load(['-p', '7003'], env, persisted);
    expect(c.port).toBe(7003); // flag
    expect(c.address).toBe('10.2.2.2'); // env over file
    expect(c.baseURL).toBe('/file'); // file over database
    expect(c.root).toBe(path.join(dir, 'files'));
    expect(load([], {}, { tokenExpirationTime: '4h' }).tokenExpirationTime).toBe(4 * 3600); // database
    expect(load([], {}, { tokenExpirationTime: 'soon' }).tokenExpirationTime).toBe(7200); // unparsable: default
  });

  it('accepts FB_BASEURL, YAML config files in $HOME, case-insensitive keys and -c', () => {
    expect(load([], { FB_BASEURL: '/legacy' }).baseURL).toBe('/legacy');
    expect(load([], { FB_BASE_URL: '/new', FB_DISABLE_EXEC: 'false' })).toMatchObject({
      baseURL: '/new',
      disableExec: false,
    });
    fs.writeFileSync(path.join(places.home, '.filebrowser.yaml'), 'PORT: 7100\nbaseurl: /home-yaml\n');
    expect(load([])).toMatchObject({ port: 7100, baseURL: '/home-yaml' });
    fs.writeFileSync(path.join(dir, 'custom.yml'), 'port: 7200\n');
    expect(load(['-c', 'custom.yml']).port).toBe(7200);
  });

  it('refuses unknown flags and bad values with one clear line', () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['--bogus'], {}, /unknown option '--bogus'/],
      [['-p', '0'], {}, /invalid value "0" for --port/],
      [['-p', '70000'], {}, /--port: expected a whole number from 1 to 65535/],
      [[], { FB_PORT: 'http' }, /invalid value "http" for FB_PORT/],
      [['--tokenExpirationTime', 'forever'], {}, /--tokenExpirationTime: expected a duration/],
      [['--imageProcessors', '0'], {}, /--imageProcessors: expected a whole number at least 1/],
      [['--socket', '/tmp/fb.sock', '-a', '0.0.0.0'], {}, /--socket cannot be combined with --address/],
      [['--socket', '/tmp/fb.sock', '-p', '80'], {}, /--socket cannot be combined with --port/],
      [['-t', 'cert.pem'], {}, /--cert needs --key/],
      [['--disableExec=maybe'], {}, /invalid value "maybe" for --disableExec/],
      [['--password', 'plain'], {}, /expected a bcrypt hash/],
      [['--trustedProxies', 'example.com'], {}, /expected an IP address or CIDR range/],
      [['-c', 'missing.json'], {}, /config file missing.json does not exist/],
    ];
    for (const [argv, env, expected] of cases) {
      const message = loadError(argv, env);
      expect(message).toMatch(expected);
      expect(message).not.toContain('\n');
    }
  });
});

describe('config init, set, cat', () => {
  it('creates a database with the given settings, then changes only the flags given to set', async () => {
    const init = await cli([
      'config',
      'init',
      '-d',
      'fb.db',
      '-r',
      'files',
      '-p',
      '9001',
      '--signup',
      '--minimumPasswordLength',
      '14',
      '--branding.name',
      'Team files',
      '--viewMode',
      'mosaic gallery',
      '--perm.execute=false',
      '--sorting.by',
      'size',
    ]);
    expect(init.err).toBe('');
    expect(init.code).toBe(0);
    expect(init.out).toContain('Team files');

    const set = await cli([
      'config',
      'set',
      '-d',
      'fb.db',
      '--signup=false',
      '--branding.theme',
      'dark',
      '-p',
      '9002',
    ]);
    expect(set.code).toBe(0);
    const store = await openStore(path.join(dir, 'fb.db'));
    const s = store.settings.get();
    expect(s).toMatchObject({ signup: false, minimumPasswordLength: 14 });
    expect(s.branding).toMatchObject({ name: 'Team files', theme: 'dark' });
    expect(s.defaults).toMatchObject({ viewMode: 'mosaic gallery', sorting: { by: 'size', asc: false } });
    expect(s.defaults.perm).toMatchObject({ execute: false, create: true, admin: false });
    expect(store.settings.getServer()).toMatchObject({ root: path.join(dir, 'files'), port: '9002' });
    expect(await store.users.count()).toBe(0);
    await store.close();

    const cat = await cli(['config', 'cat', '-d', 'fb.db']);
    expect(cat.out).toMatch(/Sign up:\s+false/);
    expect(cat.out).toMatch(/Port:\s+9002/);
  });

  it('refuses to init an existing database, bad values, and hook auth', async () => {
    expect((await cli(['config', 'init', '-d', 'fb.db'])).code).toBe(0);
    const again = await cli(['config', 'init', '-d', 'fb.db']);
    expect(again).toMatchObject({
      code: 1,
      err: expect.stringMatching(/^error: database .* already exists\n$/),
    });

    const bad: [string[], RegExp][] = [
      [
        ['--viewMode', 'grid'],
        /invalid value "grid" for --viewMode: expected one of "list", "mosaic", "mosaic gallery"/,
      ],
      [['--auth.method', 'hook'], /hook" is not supported/],
      [['--auth.method', 'proxy'], /needs --auth.header/],
      [['--fileMode', '999'], /expected an octal file mode/],
      [['--tus.retryCount', '-1'], /--tus.retryCount/],
      [['--branding.theme', 'pink'], /--branding.theme/],
      [['--nope'], /unknown option '--nope'/],
      [['--unsafeCommands', 'find,/bin/sh'], /unsafeCommands entry "\/bin\/sh" must be a bare command name/],
    ];
    for (const [flags, expected] of bad) {
      const r = await cli(['config', 'set', '-d', 'fb.db', ...flags]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(expected);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
    const missing = await cli(['config', 'cat', '-d', 'other.db']);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/other\.db does not exist/);
    expect(fs.existsSync(path.join(dir, 'other.db'))).toBe(false);
  });

  it('finds the database through FB_DATABASE and -d before the command name', async () => {
    expect((await cli(['config', 'init'], { FB_DATABASE: 'env.db' })).code).toBe(0);
    expect(fs.existsSync(path.join(dir, 'env.db'))).toBe(true);
    const r = await cli(['-d', 'env.db', 'config', 'set', '--signup']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/Sign up:\s+true/);
  });

  it('turns WebDAV account passwords off and on with --webdavPasswords', async () => {
    expect((await cli(['config', 'init', '-d', 'fb.db'])).code).toBe(0);
    expect((await cli(['config', 'cat', '-d', 'fb.db'])).out).toMatch(/WebDAV passwords:\s+true\n/);
    const off = await cli(['config', 'set', '-d', 'fb.db', '--webdavPasswords=false']);
    expect(off.err).toBe('');
    expect(off.code).toBe(0);
    expect((await cli(['config', 'cat', '-d', 'fb.db'])).out).toMatch(/WebDAV passwords:\s+false\n/);
    // Another flag leaves it as it is.
    expect((await cli(['config', 'set', '-d', 'fb.db', '--signup'])).code).toBe(0);
    let store = await openStore(path.join(dir, 'fb.db'));
    expect(store.settings.get().webdavPasswords).toBe(false);
    await store.close();

    const bad = await cli(['config', 'set', '-d', 'fb.db', '--webdavPasswords=maybe']);
    expect(bad.code).toBe(1);
    expect(bad.err.trim().split('\n')).toHaveLength(1);

    expect((await cli(['config', 'set', '-d', 'fb.db', '--webdavPasswords'])).out).toMatch(
      /WebDAV passwords:\s+true\n/,
    );
    store = await openStore(path.join(dir, 'fb.db'));
    expect(store.settings.get().webdavPasswords).toBe(true);
    await store.close();
  });

  it('sets and clears unsafeCommands, comma- or space-separated', async () => {
    expect((await cli(['config', 'init', '-d', 'fb.db'])).code).toBe(0);
    const set = await cli(['config', 'set', '-d', 'fb.db', '--unsafeCommands', 'find, env xargs,find']);
    expect(set.err).toBe('');
    expect(set.out).toMatch(/Unsafe commands:\s+find env xargs\n/);
    let store = await openStore(path.join(dir, 'fb.db'));
    expect(store.settings.get().unsafeCommands).toEqual(['find', 'env', 'xargs']);
    await store.close();

    expect((await cli(['config', 'set', '-d', 'fb.db', '--signup'])).code).toBe(0);
    store = await openStore(path.join(dir, 'fb.db'));
    expect(store.settings.get().unsafeCommands).toEqual(['find', 'env', 'xargs']);
    await store.close();

    expect((await cli(['config', 'set', '-d', 'fb.db', '--unsafeCommands', ''])).code).toBe(0);
    store = await openStore(path.join(dir, 'fb.db'));
    expect(store.settings.get().unsafeCommands).toEqual([]);
    await store.close();
  });
});

describe('where options come from', () => {
  it('warns about config-file keys that set nothing, naming the nearest option, and still runs', async () => {
    const file = path.join(dir, '.filebrowser.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        prot: 7001,
        adress: '10.0.0.1',
        tokenExpiration: '4h',
        root: 'files',
        config: 'x',
        zzz: 1,
      }),
    );
    expect((await cli(['config', 'init'])).code).toBe(0);
    const r = await cli(['users', 'ls']);
    expect(r.code).toBe(0);
    expect(r.err.trimEnd().split('\n')).toEqual([
      `warning: unknown key "prot" in ${file} is ignored (did you mean "port"?)`,
      `warning: unknown key "adress" in ${file} is ignored (did you mean "address"?)`,
      `warning: unknown key "tokenExpiration" in ${file} is ignored (did you mean "tokenExpirationTime"?)`,
      `warning: "config" in ${file} is ignored: it is a command-line flag only`,
      `warning: unknown key "zzz" in ${file} is ignored`,
    ]);
    // Known keys, in any case, warn about nothing.
    fs.writeFileSync(file, JSON.stringify({ PORT: 7001, baseurl: '/x', root: 'files' }));
    expect((await cli(['users', 'ls'])).err).toBe('');
  });

  it('--help names the FB_* variable of every option and where config files are looked for', async () => {
    const r = await cli(['--help']);
    expect(r.code).toBe(0);
    const help = r.out.replace(/\s+/g, ' ');
    for (const name of [
      'FB_DATABASE',
      'FB_PORT',
      'FB_BASE_URL',
      'FB_TOKEN_EXPIRATION_TIME',
      'FB_DISABLE_EXEC',
    ]) {
      expect(help).toContain(`[${name}]`);
    }
    expect(help).toContain(
      'the first of .filebrowser.json, .filebrowser.yaml, .filebrowser.yml found in the current folder, then $HOME, then /etc/filebrowser',
    );
    expect(help).toContain(
      'Precedence: flag > FB_* variable > config file > value saved in the database > default.',
    );
  });
});
