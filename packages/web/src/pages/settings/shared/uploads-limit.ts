/** Parallel uploads per user. */
export const MIN_UPLOADS_LIMIT = 1;
export const MAX_UPLOADS_LIMIT = 10;
