/** Headers and names that both sides of the wire must spell the same way. */
export const AUTH_HEADER = 'X-Auth';
export const AUTH_COOKIE = 'auth';
export const RENEW_HEADER = 'X-Renew-Token';
export const SHARE_PASSWORD_HEADER = 'X-SHARE-PASSWORD';
export const TOKEN_STORAGE_KEY = 'jwt';
export const TOKEN_ISSUER = 'File Browser';
