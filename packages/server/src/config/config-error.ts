/** A configuration mistake the user must fix: shown as one line, exit code 1. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}
