import fs from 'node:fs';
import path from 'node:path';
import { readDataFile, yaml } from '../config/sources.js';
import { CliError } from './io.js';

/**
 * Reading and writing File Browser's export files. JSON is written with 4-space indentation;
 * YAML with the key spelling of File Browser's YAML (yaml.v3: lower-cased Go field names).
 * Readers accept both spellings, so every lookup goes through `field`, which ignores case.
 */

export type Format = 'json' | 'yaml';

export function formatOf(file: string): Format {
  if (/\.json$/i.test(file)) return 'json';
  if (/\.ya?ml$/i.test(file)) return 'yaml';
  throw new CliError(`${file}: the file name must end in .json, .yaml or .yml`);
}

/** Lower-cases object keys recursively, as File Browser's YAML spells Go field names. */
function lowerKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(lowerKeys);
  if (value && typeof value === 'object' && !(value instanceof Uint8Array)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), lowerKeys(v)]));
  }
  return value;
}

export function writeExportFile(file: string, data: unknown): void {
  const text =
    formatOf(file) === 'json'
      ? JSON.stringify(data, null, 4) + '\n'
      : yaml().stringify(lowerKeys(data), { lineWidth: 0, customTags: ['binary'] });
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  // Exports hold password hashes and the signing key: readable by the owner only.
  fs.writeFileSync(file, text, { mode: 0o600 });
}

export function readExportFile(file: string): unknown {
  formatOf(file);
  if (!fs.existsSync(file)) throw new CliError(`${file} does not exist`);
  return readDataFile(file);
}

export type Doc = Record<string, unknown>;

export function isDoc(value: unknown): value is Doc {
  return !!value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array);
}

/** `obj[name]`, whatever the case of the key in the file. */
export function field(obj: unknown, name: string): unknown {
  if (!isDoc(obj)) return undefined;
  if (name in obj) return obj[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(obj)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

export function docField(obj: unknown, name: string): Doc {
  const v = field(obj, name);
  return isDoc(v) ? v : {};
}

export function str(obj: unknown, name: string, fallback = ''): string {
  const v = field(obj, name);
  return v === undefined || v === null ? fallback : String(v);
}

export function bool(obj: unknown, name: string, fallback = false): boolean {
  const v = field(obj, name);
  if (typeof v === 'boolean') return v;
  if (v === 'true') return true;
  if (v === 'false') return false;
  return fallback;
}

export function num(obj: unknown, name: string, fallback = 0): number {
  const v = field(obj, name);
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() ? Number(v) : NaN;
  return Number.isFinite(n) ? n : fallback;
}

export function strings(obj: unknown, name: string): string[] {
  const v = field(obj, name);
  return Array.isArray(v) ? v.map(String) : [];
}
