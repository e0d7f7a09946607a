export * from './users.js';
export * from './settings.js';
export * from './files.js';
export * from './shares.js';
export * from './http.js';
export * from './tokens.js';
export * from './trash.js';
export * from './audit.js';
