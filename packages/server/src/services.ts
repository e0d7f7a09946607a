import type { AuditLog } from './audit/log.js';
import type { AuthService } from './auth/service.js';
import type { AppContext } from './context.js';
import type { JobRegistry } from './jobs/registry.js';

/**
 * The context of the running server: the services' context and the services made from it, once
 * per app (app.ts). Routes and hooks take this one; the services themselves take `AppContext`,
 * which names none of them.
 */
export interface ServerContext extends AppContext {
  auth: AuthService;
  /** Where requests' records go (audit/http.ts queues them, in batches). */
  audit: AuditLog;
  /** Copies, moves and downloads followed by their clients (in this instance's memory). */
  jobs: JobRegistry;
}
