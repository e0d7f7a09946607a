import type { Client } from 'pg';
import { sql as raw } from 'kysely';
import type { Sql } from './sql.js';

/** The channel every instance of one database listens on. */
const CHANNEL = 'filebrowser';
/** How long a lost listening connection waits before it tries again. */
const RECONNECT_MS = 2_000;

/**
 * What one instance tells the others on the same database, and hears from them: a topic
 * (`settings`, …) that some state kept in memory changed in the database. After a listening
 * connection was lost and made again, every topic is heard once (what was said meanwhile is lost).
 */
export interface Notices {
  /** Tells the other instances that `topic` changed (this one too with `here`). */
  publish(topic: string, opts?: { here?: boolean }): Promise<void>;
  /** Hears `topic` from the other instances. */
  on(topic: string, handler: () => Promise<void>): void;
  /** Where a handler's failure goes (a log); by default nowhere. */
  failed: (err: unknown) => void;
  close(): Promise<void>;
}

class Handlers {
  private readonly byTopic = new Map<string, Array<() => Promise<void>>>();
  failed: (err: unknown) => void = () => undefined;

  on(topic: string, handler: () => Promise<void>): void {
    this.byTopic.set(topic, [...(this.byTopic.get(topic) ?? []), handler]);
  }

  run(topic?: string): void {
    const handlers =
      topic === undefined ? [...this.byTopic.values()].flat() : (this.byTopic.get(topic) ?? []);
    for (const handler of handlers) handler().catch((err: unknown) => this.failed(err));
  }
}

/** Notices that tell the others by `publish` and hear them through `handlers`. */
function noticesWith(
  handlers: Handlers,
  publish: (topic: string) => Promise<void>,
  close: () => Promise<void>,
): Notices {
  return {
    publish: (topic, opts) => {
      if (opts?.here) handlers.run(topic);
      return publish(topic);
    },
    on: (topic, handler) => handlers.on(topic, handler),
    get failed() {
      return handlers.failed;
    },
    set failed(f) {
      handlers.failed = f;
    },
    close,
  };
}

/** One process on a SQLite file: nobody else to tell. */
export function localNotices(): Notices {
  return noticesWith(
    new Handlers(),
    () => Promise.resolve(),
    () => Promise.resolve(),
  );
}

/**
 * PostgreSQL's LISTEN/NOTIFY, on a connection of its own kept open (and made again when lost);
 * notices are sent through the store's pool. Each notice names the instance that sent it, which
 * ignores its own.
 */
export async function postgresNotices(url: string, sql: Sql, instance: string): Promise<Notices> {
  const { default: pg } = await import('pg');
  const handlers = new Handlers();
  let client: Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (again: boolean): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('error', () => undefined);
    c.on('notification', (message) => {
      const [from, topic] = (message.payload ?? '').split('\n');
      if (from !== instance && topic) handlers.run(topic);
    });
    c.on('end', () => {
      if (client === c) client = undefined;
      if (!closed) later();
    });
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    if (closed) return void (await c.end());
    client = c;
    // What was said while no connection listened is lost: every topic is read again.
    if (again) handlers.run();
  };
  const later = () => {
    if (retry || closed) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect(true).catch(() => later());
    }, RECONNECT_MS);
    retry.unref();
  };
  await connect(false);

  return noticesWith(
    handlers,
    async (topic) => {
      await raw`SELECT pg_notify(${CHANNEL}, ${`${instance}\n${topic}`})`.execute(sql);
    },
    async () => {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  );
}
