import net from 'node:net';
import { looksLikeBcryptHash } from '../auth/passwords.js';
import { ConfigError } from './config-error.js';
import { parseDuration } from './defaults.js';
import type { OptionSpec, OptionValue } from './options.js';

/**
 * Parsing and checking single option values, whatever layer they come from (shared with the
 * CLI's config and user flags): each throws ConfigError naming where the value was given.
 */

const TRUE_WORDS = new Set(['1', 't', 'true', 'y', 'yes', 'on']);
const FALSE_WORDS = new Set(['0', 'f', 'false', 'n', 'no', 'off']);

export function parseBoolean(raw: unknown, label: string): boolean {
  if (typeof raw === 'boolean') return raw;
  const word = String(raw).trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new ConfigError(`invalid value "${String(raw)}" for ${label}: expected true or false`);
}

export function parseInteger(
  raw: unknown,
  label: string,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const text = typeof raw === 'number' ? String(raw) : String(raw).trim();
  const n = /^-?\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`invalid value "${String(raw)}" for ${label}: expected a whole number ${range}`);
  }
  return n;
}

/** File modes are written in octal ("0640", "640", "0o640"); a JSON number is taken as the mode itself. */
export function parseFileMode(raw: unknown, label: string): number {
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 0 && raw <= 0o7777) return raw;
  const text = String(raw).trim().replace(/^0o/i, '');
  if (!/^[0-7]{1,5}$/.test(text) || parseInt(text, 8) > 0o7777) {
    throw new ConfigError(
      `invalid value "${String(raw)}" for ${label}: expected an octal file mode like 0640`,
    );
  }
  return parseInt(text, 8);
}

export function parseList(raw: unknown): string[] {
  const items = Array.isArray(raw) ? raw.map(String) : String(raw).split(',');
  return items.map((s) => s.trim()).filter(Boolean);
}

export function formatFileMode(mode: number): string {
  return '0' + mode.toString(8).padStart(3, '0');
}

/** Seconds as a Go duration string ("2h", "1h30m", "45s"), the form File Browser stores. */
export function formatDuration(seconds: number): string {
  if (seconds <= 0) return '0s';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
}

export function parseValue(spec: OptionSpec, raw: unknown, label: string): OptionValue {
  switch (spec.kind) {
    case 'string':
    case 'path': {
      if (raw !== null && typeof raw === 'object') throw new ConfigError(`invalid value for ${label}`);
      const text = String(raw ?? '');
      if (spec.choices && !spec.choices.includes(text)) {
        throw new ConfigError(
          `invalid value "${text}" for ${label}: expected one of ${spec.choices.map((c) => `"${c}"`).join(', ')}`,
        );
      }
      return text;
    }
    case 'boolean':
      return parseBoolean(raw, label);
    case 'port':
      return parseInteger(raw, label, 1, 65535);
    case 'count':
      return parseInteger(raw, label, 1);
    case 'uint':
      return parseInteger(raw, label, 0, spec.max);
    case 'list':
      return parseList(raw);
    case 'mode':
      return parseFileMode(raw, label);
    case 'duration': {
      const text = String(raw).trim();
      if (parseDuration(text) === undefined) {
        throw new ConfigError(
          `invalid value "${text}" for ${label}: expected a duration like 2h, 90m or 1h30m`,
        );
      }
      return text;
    }
    case 'addresses': {
      const list = parseList(raw);
      for (const entry of list) {
        const [ip, bits, extra] = entry.split('/');
        const family = net.isIP(ip ?? '');
        const maxBits = family === 6 ? 128 : 32;
        const badBits = bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits);
        if (!family || badBits || extra !== undefined) {
          throw new ConfigError(
            `invalid value "${entry}" for ${label}: expected an IP address or CIDR range`,
          );
        }
      }
      return list;
    }
    case 'hash': {
      const text = String(raw ?? '');
      if (text && !looksLikeBcryptHash(text)) {
        throw new ConfigError(
          `invalid value for ${label}: expected a bcrypt hash (make one with "filebrowser hash <password>")`,
        );
      }
      return text;
    }
  }
}
