import { AuditRepo } from './audit.js';
import { DavLocksRepo, DavPropsRepo } from './dav.js';
import { openDatabase, type Db } from './db.js';
import { SessionsRepo } from './sessions.js';
import { SettingsRepo } from './settings.js';
import { SharesRepo } from './shares.js';
import { StagingRepo } from './staging.js';
import { TrashRepo } from './trash.js';
import { UploadsRepo } from './uploads.js';
import { ApiTokensRepo } from './tokens.js';
import { UsersRepo } from './users.js';

/** Every repository over one database connection. */
export interface Store {
  db: Db;
  users: UsersRepo;
  settings: SettingsRepo;
  sessions: SessionsRepo;
  shares: SharesRepo;
  uploads: UploadsRepo;
  apiTokens: ApiTokensRepo;
  staging: StagingRepo;
  davProps: DavPropsRepo;
  davLocks: DavLocksRepo;
  trash: TrashRepo;
  audit: AuditRepo;
  /** Throws when the database cannot answer a query (closed, unreadable): what /health checks. */
  ping(): void;
  close(): void;
}

export function openStore(file: string): Store {
  const db = openDatabase(file);
  return {
    db,
    users: new UsersRepo(db),
    settings: new SettingsRepo(db),
    sessions: new SessionsRepo(db),
    shares: new SharesRepo(db),
    uploads: new UploadsRepo(db),
    apiTokens: new ApiTokensRepo(db),
    staging: new StagingRepo(db),
    davProps: new DavPropsRepo(db),
    davLocks: new DavLocksRepo(db),
    trash: new TrashRepo(db),
    audit: new AuditRepo(db),
    ping: () => void db.prepare('SELECT 1').get(),
    close: () => db.close(),
  };
}
