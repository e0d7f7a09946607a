import { Command } from 'commander';
import { serverRecordFromConfig, serverRecordFromOptions } from '../config/server-record.js';
import { addOptions, flagValues } from '../config/sources.js';
import { formatDuration } from '../config/values.js';
import { defaultSettings, type StoredSettings } from '../store/settings.js';
import { addStoreOptions, openCommandStore, withStore, type OpenedStore } from './database.js';
import { readExportFile, writeExportFile, formatOf } from './export-files.js';
import { CliError, resolvePath, type CliIO } from './io.js';
import { autherToExport, configFromExport, serverToExport, settingsToExport } from './migration.js';
import { absolutePaths, checkServerRecord, SERVER_SETTING_OPTIONS } from './server-flags.js';
import { applySettingsFlags, SETTINGS_OPTIONS } from './settings-flags.js';
import { formatTable } from './table.js';
import { USER_OPTIONS } from './user-flags.js';

const CONFIG_OPTIONS = [...SERVER_SETTING_OPTIONS, ...SETTINGS_OPTIONS, ...USER_OPTIONS];

/** `filebrowser config init|set|cat|export|import`. */
export function configCommand(io: CliIO): Command {
  const config = new Command('config').description('manage the configuration kept in the database');

  addOptions(addStoreOptions(config.command('init')), CONFIG_OPTIONS)
    .description('create a new database with the given settings (no user is created)')
    .action((_opts, cmd: Command) => init(cmd, io));

  addOptions(addStoreOptions(config.command('set')), CONFIG_OPTIONS)
    .description('change the given settings; others stay as they are')
    .action((_opts, cmd: Command) =>
      withStore(cmd, io, async (opened) => {
        const values = flagValues(cmd, CONFIG_OPTIONS);
        const settings = applySettingsFlags(opened.store.settings.get(), values);
        const given = absolutePaths(pickServer(values), io.places);
        const server = { ...opened.store.settings.getServer(), ...serverRecordFromOptions(given) };
        checkServerRecord(given, server, io.places);
        await opened.store.settings.save(settings);
        await opened.store.settings.saveServer(server);
        printConfig(io, opened);
      }),
    );

  addStoreOptions(config.command('cat'))
    .description('print the configuration')
    .action((_opts, cmd: Command) => withStore(cmd, io, (opened) => printConfig(io, opened)));

  addStoreOptions(config.command('export'))
    .argument('<file>', 'a .json, .yaml or .yml file')
    .description('write settings, server options and auth method to a file (File Browser format)')
    .action((file: string, _opts, cmd: Command) =>
      withStore(cmd, io, (opened) => {
        formatOf(file);
        const settings = settingsToExport(opened.store.settings.get());
        // YAML carries the key as binary, the way File Browser's yaml.v3 wrote its byte slice.
        if (formatOf(file) === 'yaml') {
          settings.key = new Uint8Array(Buffer.from(settings.key as string, 'base64'));
        }
        writeExportFile(resolvePath(io, file), {
          settings,
          server: serverToExport(fullServerRecord(opened, io)),
          auther: autherToExport(opened.store.settings.get()),
        });
        io.out(`Configuration exported to ${file}\n`);
      }),
    );

  addStoreOptions(config.command('import'))
    .argument('<file>', 'a config export of File Browser or of this server (.json, .yaml, .yml)')
    .description('replace settings, server options and auth method with those of an export file')
    .action((file: string, _opts, cmd: Command) => {
      const doc = readExportFile(resolvePath(io, file));
      return withStore(
        cmd,
        io,
        async (opened) => {
          // The database's own signing key is kept (a new one for a new database): a key read
          // from a file may have been exposed, and old tokens cannot work here anyway.
          const base = opened.created ? defaultSettings() : opened.store.settings.get();
          const imported = configFromExport(doc, base);
          await opened.store.settings.save(imported.settings);
          await opened.store.settings.saveServer(imported.server);
          for (const w of imported.warnings) io.err(`warning: ${w}\n`);
          io.out(`Configuration imported from ${file}\n`);
        },
        { mayCreate: true },
      );
    });

  return config;
}

function pickServer(values: Record<string, unknown>) {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const s of SERVER_SETTING_OPTIONS) {
    const v = values[s.name];
    if (v !== undefined) out[s.name] = v as string;
  }
  return out;
}

async function init(cmd: Command, io: CliIO): Promise<void> {
  const values = flagValues(cmd, CONFIG_OPTIONS);
  // Everything is checked before the database file exists, so a mistake leaves nothing behind.
  const settings = applySettingsFlags(defaultSettings(), values);
  const given = absolutePaths(pickServer(values), io.places);
  const server = serverRecordFromConfig(checkServerRecord(given, {}, io.places), given);
  const opened = await openCommandStore(cmd, io, { mayCreate: true });
  try {
    if (!opened.created) throw new CliError(`database ${opened.database} already exists`);
    await opened.store.settings.save(settings);
    await opened.store.settings.saveServer(server);
    io.out(`Database ${opened.database} created.\n\n`);
    printConfig(io, opened);
  } finally {
    await opened.store.close();
  }
}

/** The saved server record with every key present (defaults filled in), as `config export` writes it. */
function fullServerRecord(opened: OpenedStore, io: CliIO): Record<string, unknown> {
  const saved = opened.store.settings.getServer();
  const resolved = checkServerRecord({}, saved, io.places);
  return { ...serverRecordFromConfig(resolved), ...saved };
}

function printConfig(io: CliIO, opened: OpenedStore): void {
  const s: StoredSettings = opened.store.settings.get();
  const server = checkServerRecord({}, opened.store.settings.getServer(), io.places);
  const yes = (b: boolean) => String(b);
  const d = s.defaults;
  const rows: string[][] = [
    ['Sign up:', yes(s.signup)],
    ['Hide login button:', yes(s.hideLoginButton)],
    ['Create user dir:', yes(s.createUserDir)],
    ['User home base path:', s.userHomeBasePath],
    ['Minimum password length:', String(s.minimumPasswordLength)],
    ['Auth method:', s.authMethod],
    ['Auth header:', s.auther.header],
    ['Logout page:', s.logoutPage],
    ['reCAPTCHA:', s.auther.recaptcha ? `${s.auther.recaptcha.host} (key and secret set)` : 'off'],
    ['Shell:', s.shell.join(' ')],
    ['Unsafe commands:', s.unsafeCommands.join(' ')],
    ['WebDAV:', s.webdav],
    ['WebDAV passwords:', yes(s.webdavPasswords)],
    ['File mode:', '0' + s.fileMode.toString(8)],
    ['Dir mode:', '0' + s.dirMode.toString(8)],
    ['', ''],
    ['Branding:', ''],
    ['  Name:', s.branding.name],
    ['  Files override:', s.branding.files],
    ['  Disable external links:', yes(s.branding.disableExternal)],
    ['  Disable used percentage:', yes(s.branding.disableUsedPercentage)],
    ['  Color:', s.branding.color],
    ['  Theme:', s.branding.theme],
    ['', ''],
    ['Tus:', ''],
    ['  Chunk size:', String(s.tus.chunkSize)],
    ['  Retry count:', String(s.tus.retryCount)],
    ['', ''],
    ['Server:', ''],
    ['  Root:', server.root],
    ['  Address:', server.socket ? '' : server.address],
    ['  Port:', server.socket ? '' : String(server.port)],
    ['  Socket:', server.socket],
    ['  Base URL:', server.baseURL],
    ['  Log:', server.log],
    ['  Log format:', server.logFormat],
    ['  Log level:', server.logLevel],
    ['  TLS cert:', server.cert],
    ['  TLS key:', server.key],
    ['  Token expiration time:', formatDuration(server.tokenExpirationTime)],
    ['  Exec enabled:', yes(!server.disableExec)],
    ['  Exec sandbox:', server.execSandbox],
    ['  Thumbnails enabled:', yes(!server.disableThumbnails)],
    ['  Resize preview:', yes(!server.disablePreviewResize)],
    ['  Type detection by header:', yes(!server.disableTypeDetectionByHeader)],
    ['  Follow external symlinks:', yes(server.followExternalSymlinks)],
    ['  Cache dir:', server.cacheDir],
    ['  Image processors:', String(server.imageProcessors)],
    ['  Trusted proxies:', server.trustedProxies.join(', ')],
    ['  Login rate limit:', String(server.loginRateLimit)],
    ['  Heavy requests per user:', `${server.heavyPerUser}, ${server.heavyQueue} waiting`],
    ['  Pending uploads per user:', String(server.uploadsPendingLimit)],
    ['  Pending upload bytes per user:', String(server.uploadsPendingBytes)],
    ['  Pending upload expiry:', formatDuration(server.uploadsExpiry)],
    ['  Connections:', `${server.maxConnections}, ${server.maxConnectionsPerAddress} per address`],
    ['  Headers timeout:', formatDuration(server.headersTimeout)],
    ['  Idle timeout:', formatDuration(server.idleTimeout)],
    ['  Shutdown grace:', `${server.shutdownGrace}s`],
    ['  Metrics:', server.metrics ? server.metricsAddress || '/metrics (admins)' : 'off'],
    ['', ''],
    ['Defaults:', ''],
    ['  Scope:', d.scope],
    ['  Locale:', d.locale],
    ['  View mode:', d.viewMode],
    ['  Single click:', yes(d.singleClick)],
    ['  Redirect after copy/move:', yes(d.redirectAfterCopyMove)],
    ['  Commands:', d.commands.join(' ')],
    ['  Sorting:', `${d.sorting.by} ${d.sorting.asc ? 'ascending' : 'descending'}`],
    ['  Hide dotfiles:', yes(d.hideDotfiles)],
    ['  Date format:', yes(d.dateFormat)],
    ['  Editor theme:', d.aceEditorTheme],
    ['  Permissions:', permissionList(d.perm)],
  ];
  io.out(formatTable(rows));
}

export function permissionList(perm: Record<string, boolean>): string {
  const granted = Object.entries(perm)
    .filter(([, v]) => v)
    .map(([k]) => k);
  return granted.length ? granted.join(' ') : '(none)';
}
