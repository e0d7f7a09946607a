import type { TokenClaims } from '@filebrowser/contract';

function base64UrlDecode(segment: string): string {
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/');
  const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
  const binary = atob(padded);
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  return new TextDecoder().decode(bytes);
}

/**
 * Reads the claims of a session token without verifying it: the server checks every request,
 * the client only needs the user snapshot to decide what to show.
 */
export function decodeToken(jwt: string): TokenClaims {
  const parts = jwt.split('.');
  if (parts.length !== 3 || !parts[1]) throw new Error('malformed token');
  const claims = JSON.parse(base64UrlDecode(parts[1])) as Partial<TokenClaims>;
  if (!claims || typeof claims !== 'object' || !claims.user || typeof claims.exp !== 'number') {
    throw new Error('malformed token');
  }
  return claims as TokenClaims;
}

/** Decodes a token, or undefined when it cannot be read. */
export function tryDecodeToken(jwt: string): TokenClaims | undefined {
  try {
    return decodeToken(jwt);
  } catch {
    return undefined;
  }
}

export function isExpired(claims: TokenClaims, nowMs: number = Date.now()): boolean {
  return claims.exp * 1000 <= nowMs;
}
