import { SPEC_BY_NAME, type OptionValues } from './options.js';
import { formatDuration, parseValue } from './values.js';
import type { ServerConfig } from './types.js';

// ---------------------------------------------------------------------------------------------
// The server record saved in the database (File Browser's `server` object, plus our options)

/** [option name, key of the saved record, saved as the negation]. */
const RECORD_FIELDS: [string, string, boolean][] = [
  ['root', 'root', false],
  ['baseURL', 'baseURL', false],
  ['socket', 'socket', false],
  ['key', 'tlsKey', false],
  ['cert', 'tlsCert', false],
  ['port', 'port', false],
  ['address', 'address', false],
  ['log', 'log', false],
  ['logFormat', 'logFormat', false],
  ['logLevel', 'logLevel', false],
  ['disableThumbnails', 'enableThumbnails', true],
  ['disablePreviewResize', 'resizePreview', true],
  ['disableExec', 'enableExec', true],
  ['disableTypeDetectionByHeader', 'typeDetectionByHeader', true],
  ['disableImageResolutionCalc', 'imageResolutionCalculation', true],
  ['tokenExpirationTime', 'tokenExpirationTime', false],
  ['followExternalSymlinks', 'followExternalSymlinks', false],
  ['cacheDir', 'cacheDir', false],
  ['imageProcessors', 'imageProcessors', false],
  ['socketPerm', 'socketPerm', false],
  ['trustedProxies', 'trustedProxies', false],
  ['loginRateLimit', 'loginRateLimit', false],
  ['execPath', 'execPath', false],
  ['execTimeLimit', 'execTimeLimit', false],
  ['execOutputLimit', 'execOutputLimit', false],
  ['execSandbox', 'execSandbox', false],
  ['heavyPerUser', 'heavyPerUser', false],
  ['heavyQueue', 'heavyQueue', false],
  ['uploadsPendingLimit', 'uploadsPendingLimit', false],
  ['uploadsPendingBytes', 'uploadsPendingBytes', false],
  ['uploadsExpiry', 'uploadsExpiry', false],
  ['maxConnections', 'maxConnections', false],
  ['maxConnectionsPerAddress', 'maxConnectionsPerAddress', false],
  ['headersTimeout', 'headersTimeout', false],
  ['idleTimeout', 'idleTimeout', false],
  ['shutdownGrace', 'shutdownGrace', false],
  ['bcryptCost', 'bcryptCost', false],
  ['metrics', 'metrics', false],
  ['metricsAddress', 'metricsAddress', false],
];

/** Keys of File Browser's exported `server` object, in its order, then ours. */
export const SERVER_RECORD_KEYS = [...RECORD_FIELDS.map(([, key]) => key), 'authHook'];

/** Options as the saved server record spells them (for `config init|set`). */
export function serverRecordFromOptions(values: OptionValues): Record<string, unknown> {
  const record: Record<string, unknown> = {};
  for (const [option, key, negated] of RECORD_FIELDS) {
    const v = values[option];
    if (v === undefined) continue;
    if (option === 'port')
      record[key] = String(v); // File Browser keeps the port as a string
    else record[key] = negated ? !v : v;
  }
  return record;
}

/** The full record for a resolved configuration (quick setup and `config init`). */
export function serverRecordFromConfig(
  config: ServerConfig,
  extra: OptionValues = {},
): Record<string, unknown> {
  return {
    ...serverRecordFromOptions({
      root: config.root,
      baseURL: config.baseURL,
      socket: config.socket,
      key: config.key,
      cert: config.cert,
      port: config.port,
      address: config.address,
      log: config.log,
      logFormat: config.logFormat,
      logLevel: config.logLevel,
      disableThumbnails: config.disableThumbnails,
      disablePreviewResize: config.disablePreviewResize,
      disableExec: config.disableExec,
      disableTypeDetectionByHeader: config.disableTypeDetectionByHeader,
      disableImageResolutionCalc: false,
      tokenExpirationTime: formatDuration(config.tokenExpirationTime),
      followExternalSymlinks: config.followExternalSymlinks,
      cacheDir: config.cacheDir,
      imageProcessors: config.imageProcessors,
      socketPerm: config.socketPerm,
      trustedProxies: config.trustedProxies,
      loginRateLimit: config.loginRateLimit,
      execPath: config.execPath,
      execTimeLimit: config.execTimeLimit,
      execOutputLimit: config.execOutputLimit,
      execSandbox: config.execSandbox,
      heavyPerUser: config.heavyPerUser,
      heavyQueue: config.heavyQueue,
      uploadsPendingLimit: config.uploadsPendingLimit,
      uploadsPendingBytes: config.uploadsPendingBytes,
      uploadsExpiry: formatDuration(config.uploadsExpiry),
      maxConnections: config.maxConnections,
      maxConnectionsPerAddress: config.maxConnectionsPerAddress,
      headersTimeout: formatDuration(config.headersTimeout),
      idleTimeout: formatDuration(config.idleTimeout),
      shutdownGrace: config.shutdownGrace,
      bcryptCost: config.bcryptCost,
      metrics: config.metrics,
      metricsAddress: config.metricsAddress,
      ...extra,
    }),
    authHook: '',
  };
}

/**
 * Options from the saved record. Keys match without regard to case (File Browser's YAML exports
 * lower-case them); a value that no longer parses falls back to the default, as File Browser did
 * for an unparsable tokenExpirationTime.
 */
export function optionsFromServerRecord(record: Record<string, unknown>): OptionValues {
  const byLowerKey = new Map(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
  const values: OptionValues = {};
  for (const [option, key, negated] of RECORD_FIELDS) {
    const raw = byLowerKey.get(key.toLowerCase());
    // "" is a real value for strings (log "" discards, address "" listens everywhere).
    if (raw === undefined || raw === null) continue;
    try {
      const v = parseValue(SPEC_BY_NAME.get(option)!, raw, key);
      values[option] = negated ? !v : v;
    } catch {
      // An old or hand-edited value: the layers below take over.
    }
  }
  return values;
}
