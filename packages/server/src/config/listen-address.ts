import { ConfigError } from './config-error.js';

/** `host:port` or `[ipv6]:port`, as --metricsAddress takes it; port 0 picks a free one. */
export function parseListenAddress(raw: string, label: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new ConfigError(
      `invalid value "${raw}" for ${label}: expected host:port, like 127.0.0.1:9180 or [::1]:9180`,
    );
  }
  return { host: (m[1] ?? m[2])!, port };
}
