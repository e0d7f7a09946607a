import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFilesApp, type FilesApp } from './files-helpers.js';

/**
 * Every route that may change state (a method other than GET, HEAD, OPTIONS) declares what its
 * requests record in the audit log, or `false` said on purpose: a new route cannot slip past it.
 */
describe('audit declarations', () => {
  let t: FilesApp;
  beforeAll(async () => {
    t = await startFilesApp();
  });
  afterAll(() => t.close());

  it('leaves no state-changing route without an audit action', () => {
    expect(t.routes.urls().length).toBeGreaterThan(20);
    expect(t.routes.unaudited()).toEqual([]);
  });
});
