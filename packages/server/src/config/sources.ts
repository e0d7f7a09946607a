import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Command } from 'commander';
import { Option } from 'commander';
import type * as Yaml from 'yaml';
import { ConfigError } from './config-error.js';
import { SERVE_OPTIONS, type OptionSpec, type OptionValues } from './options.js';
import { parseBoolean, parseValue } from './values.js';

/**
 * Where values set on purpose come from: command-line flags (through commander), FB_* variables
 * and the config file (JSON or YAML). Each source gives its values parsed and checked.
 */

export type Env = Record<string, string | undefined>;

/** Where relative paths and the config file are looked up. */
export interface ConfigPlaces {
  cwd: string;
  home: string;
  /** Last folder searched for `.filebrowser.*` (File Browser's /etc/filebrowser/). */
  systemDir?: string;
}

// ---------------------------------------------------------------------------------------------
// Command-line flags through commander

/** "tokenExpirationTime" -> "TOKEN_EXPIRATION_TIME", "baseURL" -> "BASE_URL". */
export function envName(optionName: string): string {
  return (
    'FB_' +
    optionName
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
      .replace(/\./g, '_')
      .toUpperCase()
  );
}

/** Adds options to a command. Booleans get a hidden `--no-x` so `--x=false` can be rewritten to it. */
export function addOptions(cmd: Command, specs: OptionSpec[]): Command {
  for (const spec of specs) {
    const flags = `${spec.short ? `-${spec.short}, ` : ''}--${spec.name}`;
    if (spec.kind === 'boolean') {
      cmd.addOption(new Option(flags, spec.description).hideHelp(!!spec.hidden));
      cmd.addOption(new Option(`--no-${spec.name}`).hideHelp());
    } else {
      cmd.addOption(new Option(`${flags} <value>`, spec.description).hideHelp(!!spec.hidden));
    }
  }
  return cmd;
}

/**
 * Rewrites `--flag=true|false` of boolean flags into `--flag` / `--no-flag`: commander's booleans
 * take no value, while File Browser's (pflag) accept one after "=".
 */
export function rewriteBooleanFlags(argv: string[], booleanNames: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    const m = /^--([^=]+)=(.*)$/s.exec(arg);
    if (m && booleanNames.has(m[1]!)) {
      out.push(parseBoolean(m[2], `--${m[1]}`) ? `--${m[1]}` : `--no-${m[1]}`);
    } else {
      out.push(arg);
    }
  }
  return out;
}

/** The options a user typed on the command line, parsed and checked. */
export function flagValues(cmd: Command, specs: OptionSpec[]): OptionValues {
  const opts = cmd.opts<Record<string, unknown>>();
  const values: OptionValues = {};
  for (const spec of specs) {
    if (cmd.getOptionValueSource(spec.name) !== 'cli') continue;
    const flag = `--${spec.name}`;
    values[spec.name] = parseValue(spec, opts[spec.name], flag);
  }
  return values;
}

// ---------------------------------------------------------------------------------------------
// Environment and config file

/** FB_* values. The name without underscores (FB_BASEURL) is accepted too, as File Browser did. */
export function envValues(env: Env, specs: OptionSpec[] = SERVE_OPTIONS): OptionValues {
  const values: OptionValues = {};
  for (const spec of specs) {
    if (spec.layered === false) continue;
    const name = envName(spec.name);
    const raw = env[name] ?? env[name.slice(0, 3) + name.slice(3).replaceAll('_', '')];
    if (raw === undefined) continue;
    values[spec.name] = parseValue(spec, raw, `${name}`);
  }
  return values;
}

const CONFIG_NAMES = ['.filebrowser.json', '.filebrowser.yaml', '.filebrowser.yml'];

export function findConfigFile(places: ConfigPlaces): string | undefined {
  const dirs = [places.cwd, places.home, places.systemDir ?? '/etc/filebrowser'].filter(Boolean);
  for (const dir of dirs) {
    for (const name of CONFIG_NAMES) {
      const file = path.join(dir, name);
      if (fs.existsSync(file)) return file;
    }
  }
  return undefined;
}

/** The YAML parser, loaded only when a YAML file is read (most servers have none: 7 MB less at rest). */
export function yaml(): typeof Yaml {
  return createRequire(import.meta.url)('yaml') as typeof Yaml;
}

/** Reads a JSON or YAML document (by extension; YAML is a superset of JSON for anything else). */
export function readDataFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return /\.json$/i.test(file) ? JSON.parse(text) : yaml().parse(text, { customTags: ['binary'] });
  } catch (err) {
    const first = (err as Error).message.split('\n')[0];
    throw new ConfigError(`cannot parse ${file}: ${first}`);
  }
}

/** Config-file values; keys are flag names, matched without regard to case as viper did. */
export function configFileValues(file: string, specs: OptionSpec[] = SERVE_OPTIONS): OptionValues {
  return configFileLayer(file, specs).values;
}

/** A config file's values, and a warning for each key that names no option it can set. */
export function configFileLayer(
  file: string,
  specs: OptionSpec[] = SERVE_OPTIONS,
): { values: OptionValues; warnings: string[] } {
  if (/\.toml$/i.test(file))
    throw new ConfigError(`config file ${file}: TOML is not supported, use JSON or YAML`);
  const doc = readDataFile(file);
  if (doc === null || doc === undefined) return { values: {}, warnings: [] };
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError(`config file ${file} must hold an object of option names and values`);
  }
  const byLowerKey = new Map(Object.entries(doc).map(([k, v]) => [k.toLowerCase(), v]));
  const values: OptionValues = {};
  for (const spec of specs) {
    if (spec.layered === false) continue;
    const raw = byLowerKey.get(spec.name.toLowerCase());
    if (raw === undefined || raw === null) continue;
    values[spec.name] = parseValue(spec, raw, `"${spec.name}" in ${file}`);
  }
  return { values, warnings: unknownKeyWarnings(file, Object.keys(doc), specs) };
}

/** A key nothing reads would silently change nothing: `prot: 80` leaves the port at 8080. */
function unknownKeyWarnings(file: string, keys: string[], specs: OptionSpec[]): string[] {
  const layered = specs.filter((s) => s.layered !== false && !s.hidden).map((s) => s.name);
  const known = new Set(specs.filter((s) => s.layered !== false).map((s) => s.name.toLowerCase()));
  const flagOnly = new Set(specs.filter((s) => s.layered === false).map((s) => s.name.toLowerCase()));
  return keys.flatMap((key) => {
    const lower = key.toLowerCase();
    if (known.has(lower)) return [];
    if (flagOnly.has(lower)) return [`"${key}" in ${file} is ignored: it is a command-line flag only`];
    const near = nearestName(lower, layered);
    return [`unknown key "${key}" in ${file} is ignored${near ? ` (did you mean "${near}"?)` : ''}`];
  });
}

/** The option name closest to `typed` (case-insensitive edit distance), when close enough to be a typo. */
function nearestName(typed: string, names: string[]): string | undefined {
  const limit = typed.length <= 4 ? 1 : Math.floor(typed.length / 3);
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    const distance = editDistance(typed, name.toLowerCase());
    if (distance <= limit && (!best || distance < best.distance)) best = { name, distance };
  }
  return best?.name;
}

/** Levenshtein distance where swapping two neighbours counts as one edit (`prot` → `port`). */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/** The config file a run uses: `--config` when given (it must exist), else the first one found. */
export function configFileFor(flags: OptionValues, places: ConfigPlaces): string | undefined {
  const given = flags.config as string | undefined;
  if (given) {
    const file = path.resolve(places.cwd, given);
    if (!fs.existsSync(file)) throw new ConfigError(`config file ${given} does not exist`);
    return file;
  }
  return findConfigFile(places);
}
