import type { TestProject } from 'vitest/node';
import { startCluster } from './cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The throw-away cluster's `postgres` database (test/postgres/cluster.ts). */
    postgresAdminUrl: string;
  }
}

/** The server-postgres project: one cluster for the whole run, a database per test app. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const cluster = await startCluster();
  project.provide('postgresAdminUrl', cluster.adminUrl);
  return () => cluster.stop();
}
