import { describe, expect, it } from 'vitest';
import { describePostgresUrl } from './postgres.js';

describe('describePostgresUrl', () => {
  it.each([
    [
      'postgres://filebrowser:s3cret@db.internal:5432/filebrowser',
      'postgres://filebrowser@db.internal:5432/filebrowser',
    ],
    // The socket form docs/scale-out.md shows: no host before the path.
    [
      'postgres://filebrowser@/filebrowser?host=/run/postgresql',
      'postgres://filebrowser@/run/postgresql/filebrowser',
    ],
    ['postgres://fb:pw@/files?host=/tmp/sock&port=18700', 'postgres://fb@/tmp/sock:18700/files'],
    ['postgresql://db.internal/files', 'postgres://db.internal/files'],
  ])('names %s as %s, never the password', (url, named) => {
    expect(describePostgresUrl(url)).toBe(named);
  });
});
