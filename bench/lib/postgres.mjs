// `--database postgres://…`: the bench runs the server on PostgreSQL, in a database of its own made
// on that server for the run and dropped after it (the URL's user must be allowed to create one).
import crypto from 'node:crypto';

/** @param {string} url */
export function isPostgresUrl(url) {
  return /^postgres(ql)?:\/\//.test(url);
}

/**
 * Creates an empty database on the server `url` names; answers its URL and how to drop it.
 * @param {string} url
 * @returns {Promise<{ url: string, drop: () => Promise<void> }>}
 */
export async function freshDatabase(url) {
  const { default: pg } = await import('pg');
  const name = `fb_bench_${crypto.randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const made = new URL(url);
  made.pathname = `/${name}`;
  return {
    url: made.toString(),
    drop: async () => {
      const again = new pg.Client({ connectionString: url });
      await again.connect();
      try {
        await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}
