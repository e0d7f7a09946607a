import { SignJWT, jwtVerify } from 'jose';
import { TOKEN_ISSUER, type TokenClaims, type TokenUser } from '@filebrowser/contract';
import type { StoredUser } from '../store/users.js';

export function tokenUser(u: StoredUser): TokenUser {
  return {
    id: u.id,
    locale: u.locale,
    viewMode: u.viewMode,
    singleClick: u.singleClick,
    redirectAfterCopyMove: u.redirectAfterCopyMove,
    perm: u.perm,
    commands: u.commands,
    lockPassword: u.lockPassword,
    hideDotfiles: u.hideDotfiles,
    dateFormat: u.dateFormat,
    username: u.username,
    aceEditorTheme: u.aceEditorTheme,
    uploadsLimit: u.uploadsLimit,
    sorting: u.sorting,
  };
}

function keyBytes(key: string): Uint8Array {
  return new Uint8Array(Buffer.from(key, 'base64'));
}

/** HS256 JWT with File Browser's claims plus `sid`, the server-side session it belongs to. */
export async function signToken(
  user: StoredUser,
  sessionId: string,
  key: string,
  lifetimeSeconds: number,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  // Claims in File Browser's order (user, iss, exp, iat), then ours.
  return new SignJWT({
    user: tokenUser(user),
    iss: TOKEN_ISSUER,
    exp: now + lifetimeSeconds,
    iat: now,
    sid: sessionId,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(keyBytes(key));
}

/** The claims of a valid, unexpired token signed with `key`; undefined otherwise. */
export async function verifyToken(token: string, key: string): Promise<TokenClaims | undefined> {
  if (token.split('.').length !== 3) return undefined;
  try {
    const { payload } = await jwtVerify(token, keyBytes(key), {
      algorithms: ['HS256'],
      requiredClaims: ['exp'],
    });
    const claims = payload as unknown as TokenClaims;
    // Claims of the wrong type are a token this server did not make (a red-team finding: a
    // numeric sid reached the session lookup and answered 500).
    if (typeof claims.user?.id !== 'number') return undefined;
    if (claims.sid !== undefined && typeof claims.sid !== 'string') return undefined;
    return claims;
  } catch {
    return undefined;
  }
}
