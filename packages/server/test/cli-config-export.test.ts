import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import { openStore } from '../src/store/index.js';
import { useConfigFolder, dir, places, cli } from './cli-config-helpers.js';

/** `config export` and `config import`: our own exports and File Browser's, in JSON and YAML. */
useConfigFolder();

describe('config export and import', () => {
  it('round-trips through JSON and YAML', async () => {
    await cli([
      'config',
      'init',
      '-d',
      'a.db',
      '-r',
      'files',
      '--baseURL',
      '/fb',
      '--auth.method',
      'proxy',
      '--auth.header',
      'X-User',
      '--tus.chunkSize',
      '1048576',
      '--shell',
      'bash -c',
      '--unsafeCommands',
      'find',
      '--locale',
      'de',
      '--webdavPasswords=false',
    ]);
    for (const file of ['out.json', 'out.yaml']) {
      const exported = await cli(['config', 'export', '-d', 'a.db', file]);
      expect(exported.code).toBe(0);
      const imported = await cli(['config', 'import', '-d', `from-${file}.db`, file]);
      expect(imported.err).toBe('');
      expect(imported.code).toBe(0);
      const a = await openStore(path.join(dir, 'a.db'));
      const b = await openStore(path.join(dir, `from-${file}.db`));
      const { key: keyA, ...settingsA } = a.settings.get();
      const { key: keyB, ...settingsB } = b.settings.get();
      expect(settingsB).toEqual(settingsA);
      // A new database gets its own signing key (see docs/migrating-from-filebrowser.md).
      expect(keyB).not.toBe(keyA);
      expect(b.settings.getServer()).toMatchObject({ root: path.join(dir, 'files'), baseURL: '/fb' });
      await a.close();
      await b.close();
    }
    const json = JSON.parse(fs.readFileSync(path.join(dir, 'out.json'), 'utf8'));
    expect(Object.keys(json)).toEqual(['settings', 'server', 'auther']);
    expect(json.settings.unsafeCommands).toEqual(['find']);
    expect(json.settings.webdavPasswords).toBe(false);
    expect(json.auther).toEqual({ header: 'X-User' });
    expect(fs.readFileSync(path.join(dir, 'out.json'), 'utf8')).toContain(
      '\n    "settings": {\n        "key": ',
    );
    const yaml = fs.readFileSync(path.join(dir, 'out.yaml'), 'utf8');
    expect(yaml).toContain('hideloginbutton:');
    expect(yaml).toContain('key: !!binary');
  });

  it('imports File Browser exports in JSON and in YAML with lower-cased keys', async () => {
    const key = Buffer.alloc(64, 7).toString('base64');
    const goJson = {
      settings: {
        key,
        signup: true,
        hideLoginButton: false,
        createUserDir: true,
        userHomeBasePath: '/homes',
        defaults: {
          scope: '.',
          locale: 'fr',
          viewMode: 'list',
          singleClick: true,
          redirectAfterCopyMove: true,
          sorting: { by: 'modified', asc: true },
          perm: {
            admin: false,
            execute: false,
            create: true,
            rename: true,
            modify: true,
            delete: false,
            share: true,
            download: true,
          },
          commands: ['ls'],
          hideDotfiles: true,
          dateFormat: true,
          aceEditorTheme: 'monokai',
        },
        authMethod: 'json',
        logoutPage: '/login',
        branding: {
          name: 'Old files',
          disableExternal: true,
          disableUsedPercentage: false,
          files: '',
          theme: 'dark',
          color: '#336699',
        },
        tus: { chunkSize: 5242880, retryCount: 3 },
        commands: { after_upload: ['echo done'] },
        shell: ['bash', '-c'],
        rules: [{ regex: true, allow: false, path: '', regexp: { raw: '\\.secret$' } }],
        minimumPasswordLength: 10,
        fileMode: 420,
        dirMode: 493,
        hideDotfiles: false,
      },
      server: {
        root: path.join(dir, 'files'),
        baseURL: '/old',
        socket: '',
        tlsKey: '',
        tlsCert: '',
        port: '8081',
        address: '0.0.0.0',
        log: 'stdout',
        enableThumbnails: true,
        resizePreview: false,
        enableExec: false,
        typeDetectionByHeader: true,
        imageResolutionCalculation: true,
        authHook: '',
        tokenExpirationTime: '6h',
        followExternalSymlinks: false,
      },
      auther: { recaptcha: { host: 'https://www.recaptcha.net', key: 'site-key', secret: 'site-secret' } },
    };
    fs.writeFileSync(path.join(dir, 'fb-config.json'), JSON.stringify(goJson, null, 4));
    const goYaml = `settings:
  key: !!binary ${key}
  signup: true
  hideloginbutton: false
  createuserdir: true
  userhomebasepath: /homes
  defaults:
    scope: .
    locale: fr
    viewmode: list
    singleclick: true
    redirectaftercopymove: true
    sorting:
      by: modified
      asc: true
    perm:
      admin: false
      execute: false
      create: true
      rename: true
      modify: true
      delete: false
      share: true
      download: true
    commands:
      - ls
    hidedotfiles: true
    dateformat: true
    aceeditortheme: monokai
  authmethod: json
  logoutpage: /login
  branding:
    name: Old files
    disableexternal: true
    disableusedpercentage: false
    files: ""
    theme: dark
    color: "#336699"
  tus:
    chunksize: 5242880
    retrycount: 3
  commands:
    after_upload:
      - echo done
  shell:
    - bash
    - -c
  rules:
    - regex: true
      allow: false
      path: ""
      regexp:
        raw: \\.secret$
  minimumpasswordlength: 10
  filemode: 420
  dirmode: 493
server:
  root: ${path.join(dir, 'files')}
  baseurl: /old
  socket: ""
  tlskey: ""
  tlscert: ""
  port: "8081"
  address: 0.0.0.0
  log: stdout
  enablethumbnails: true
  resizepreview: false
  enableexec: false
  typedetectionbyheader: true
  imageresolutioncal: true
  authhook: ""
  tokenexpirationtime: 6h
auther:
  recaptcha:
    host: https://www.recaptcha.net
    key: site-key
    secret: site-secret
`;
    fs.writeFileSync(path.join(dir, 'fb-config.yaml'), goYaml);

    for (const file of ['fb-config.json', 'fb-config.yaml']) {
      const db = `${file}.db`;
      const r = await cli(['config', 'import', '-d', db, file]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const store = await openStore(path.join(dir, db));
      const s = store.settings.get();
      expect(s).toMatchObject({
        signup: true,
        hideLoginButton: false,
        createUserDir: true,
        userHomeBasePath: '/homes',
        authMethod: 'json',
        minimumPasswordLength: 10,
        fileMode: 0o644,
        dirMode: 0o755,
        shell: ['bash', '-c'],
        tus: { chunkSize: 5242880, retryCount: 3 },
        branding: { name: 'Old files', disableExternal: true, theme: 'dark', color: '#336699' },
        auther: { recaptcha: { host: 'https://www.recaptcha.net', key: 'site-key', secret: 'site-secret' } },
      });
      expect(s.defaults).toMatchObject({
        locale: 'fr',
        viewMode: 'list',
        singleClick: true,
        sorting: { by: 'modified', asc: true },
        commands: ['ls'],
        hideDotfiles: true,
        dateFormat: true,
        aceEditorTheme: 'monokai',
      });
      expect(s.defaults.perm).toMatchObject({ execute: false, delete: false, share: true });
      expect(s.rules).toEqual([{ regex: true, allow: false, path: '', regexp: { raw: '\\.secret$' } }]);
      expect(s.commands.after_upload).toEqual(['echo done']);
      expect(s.commands.before_save).toEqual([]);
      // File Browser has no such setting: nothing is exempt from the deny list after a migration.
      expect(s.unsafeCommands).toEqual([]);
      const config = loadConfig([], {}, { ...places, persisted: store.settings.getServer() });
      expect(config).toMatchObject({
        root: path.join(dir, 'files'),
        baseURL: '/old',
        port: 8081,
        address: '0.0.0.0',
        disableThumbnails: false,
        disablePreviewResize: true,
        disableExec: true,
        tokenExpirationTime: 6 * 3600,
      });
      await store.close();
    }
  });

  it('keeps the signing key of an existing database and turns hook auth into json with a warning', async () => {
    await cli(['config', 'init', '-d', 'fb.db']);
    const store = await openStore(path.join(dir, 'fb.db'));
    const key = store.settings.get().key;
    await store.close();
    fs.writeFileSync(
      path.join(dir, 'hook.json'),
      JSON.stringify({
        settings: { key: 'AAAA', authMethod: 'hook' },
        server: {},
        auther: { command: 'check.sh' },
      }),
    );
    const r = await cli(['config', 'import', '-d', 'fb.db', 'hook.json']);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/^warning: hook authentication is not supported/);
    const after = await openStore(path.join(dir, 'fb.db'));
    expect(after.settings.get()).toMatchObject({ key, authMethod: 'json', auther: { command: 'check.sh' } });
    await after.close();
  });

  it('refuses files that are not config exports, with one line', async () => {
    fs.writeFileSync(path.join(dir, 'list.json'), '[]');
    fs.writeFileSync(path.join(dir, 'broken.json'), '{"settings": ');
    fs.writeFileSync(
      path.join(dir, 'badrule.json'),
      JSON.stringify({ settings: { rules: [{ regex: true, regexp: { raw: '(' } }] } }),
    );
    fs.writeFileSync(
      path.join(dir, 'badunsafe.json'),
      JSON.stringify({ settings: { unsafeCommands: ['../bin/sh'] } }),
    );
    const cases: [string, RegExp][] = [
      ['badunsafe.json', /unsafeCommands entry "\.\.\/bin\/sh" must be a bare command name/],
      ['list.json', /no "settings" object/],
      ['broken.json', /cannot parse .*broken\.json/],
      ['badrule.json', /global rule 1 has an invalid regular expression/],
      ['missing.json', /missing\.json does not exist/],
      ['notes.txt', /must end in \.json, \.yaml or \.yml/],
    ];
    for (const [file, expected] of cases) {
      const r = await cli(['config', 'import', '-d', 'x.db', file]);
      expect(r.code).toBe(1);
      expect(r.err).toMatch(expected);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
  });
});
