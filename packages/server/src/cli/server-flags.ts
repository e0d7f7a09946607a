import path from 'node:path';
import { resolveServerConfig } from '../config/load.js';
import { SERVE_OPTIONS, type OptionValues } from '../config/options.js';
import type { ConfigPlaces } from '../config/sources.js';
import type { ServerConfig } from '../config/types.js';

/** Server options `config init|set` save in the database (serving-only and first-start flags left out). */
export const SERVER_SETTING_OPTIONS = SERVE_OPTIONS.filter(
  (s) => !['config', 'database', 'noauth', 'username', 'password', 'webDist'].includes(s.name),
);

const PATH_OPTIONS = ['root', 'cert', 'key', 'socket', 'cacheDir'];

/** Saved paths are absolute: the server may later start from another folder. */
export function absolutePaths(values: OptionValues, places: ConfigPlaces): OptionValues {
  const out = { ...values };
  for (const name of PATH_OPTIONS) {
    const v = out[name];
    if (typeof v === 'string' && v) out[name] = path.resolve(places.cwd, v);
  }
  return out;
}

/** Checks a server record the way serving will read it (cert without key, bad combinations...). */
export function checkServerRecord(
  given: OptionValues,
  record: Record<string, unknown>,
  places: ConfigPlaces,
): ServerConfig {
  const sources = Object.fromEntries(Object.keys(given).map((k) => [k, 'flag' as const]));
  return resolveServerConfig({ values: given, sources, configFile: undefined, warnings: [] }, record, places);
}
