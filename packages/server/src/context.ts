import type { ServerConfig } from './config/types.js';
import type { AuditLog } from './audit/log.js';
import type { AuthService } from './auth/service.js';
import type { FairScheduler } from './heavy-work.js';
import type { JobRegistry } from './jobs/registry.js';
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

/** What every service and route is given: configuration, the store and a logger. Built once per app. */
export interface AppContext {
  config: ServerConfig;
  store: Store;
  log: Logger;
  auth: AuthService;
  /** Where requests' records go (audit/http.ts queues them, in batches). */
  audit: AuditLog;
  /** Copies, moves and downloads followed by their clients (in this instance's memory). */
  jobs: JobRegistry;
  /** Heavy requests (big listings, PROPFIND, search, archives): each user's turns (http/heavy.ts). */
  heavy: FairScheduler;
}
