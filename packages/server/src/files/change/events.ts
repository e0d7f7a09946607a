/**
 * What other parts of the server need to hear about file changes (the preview cache, for one).
 * Handlers run after the change; their failures are logged, never turned into the answer.
 */
export interface FileEvents {
  /** A file was written (created or replaced) at this real path. */
  changed?(realPath: string): Promise<void> | void;
  /** A file or folder (and everything below it) was removed. */
  deleted?(realPath: string): Promise<void> | void;
  /** A file or folder moved. */
  moved?(fromRealPath: string, toRealPath: string): Promise<void> | void;
}
