import type { ServerConfig } from './config/types.js';
import type { FairScheduler } from './heavy-work.js';
import type { Store } from './store/index.js';

/** A minimal logger interface so services do not depend on Fastify's. */
export interface Logger {
  info(msg: string): void;
  info(obj: object, msg?: string): void;
  warn(msg: string): void;
  warn(obj: object, msg?: string): void;
  error(msg: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * What every service is given: configuration, the store and a logger. Built once per app. It
 * names none of the services made from it (the auth service, the audit log, the job registry):
 * they take this context, and the context that carries them too is `ServerContext`
 * (services.ts), assembled where they are made, so no service's module leads back to itself.
 */
export interface AppContext {
  config: ServerConfig;
  store: Store;
  log: Logger;
  /** Heavy requests (big listings, PROPFIND, search, archives): each user's turns (http/heavy.ts). */
  heavy: FairScheduler;
}
