import type { TokenUser } from '@filebrowser/contract';

/** Who may see a route. */
export type RouteAccess =
  /** Anyone (error pages, public shares). */
  | 'public'
  /** Signed-out visitors only (the login screen). */
  | 'guest'
  /** Any signed-in user. */
  | 'user'
  /** Signed-in users with the share permission. */
  | 'share'
  /** Admins. */
  | 'admin';

export type GuardDecision = { allow: true } | { allow: false; redirect: string };

export const HOME_ROUTE = '/files/';
export const LOGIN_ROUTE = '/login';
export const FORBIDDEN_ROUTE = '/403';

/** The login address that brings the visitor back to `wanted` once signed in. */
export function loginRedirect(wanted: string): string {
  return `${LOGIN_ROUTE}?redirect=${encodeURIComponent(wanted)}`;
}

/**
 * Decides whether the current user may see a route, and where to send them otherwise.
 * `wanted` is the requested path with its query, kept so that signing in can return to it.
 */
export function decideAccess(access: RouteAccess, user: TokenUser | null, wanted: string): GuardDecision {
  switch (access) {
    case 'public':
      return { allow: true };
    case 'guest':
      // Signing in on the login screen lands here too: it continues to the page that was wanted.
      return user ? { allow: false, redirect: afterLoginTarget(redirectQuery(wanted)) } : { allow: true };
    case 'user':
      return user ? { allow: true } : { allow: false, redirect: loginRedirect(wanted) };
    case 'share':
      if (!user) return { allow: false, redirect: loginRedirect(wanted) };
      return user.perm.share ? { allow: true } : { allow: false, redirect: FORBIDDEN_ROUTE };
    case 'admin':
      if (!user) return { allow: false, redirect: loginRedirect(wanted) };
      return user.perm.admin ? { allow: true } : { allow: false, redirect: FORBIDDEN_ROUTE };
  }
}

function redirectQuery(wanted: string): string | null {
  const query = wanted.indexOf('?');
  return query === -1 ? null : new URLSearchParams(wanted.slice(query)).get('redirect');
}

/** Where the login screen sends a user after success: the redirect query when it is a local path. */
export function afterLoginTarget(redirect: string | null): string {
  // Only same-site paths: "//host" or "https://..." would turn the login page into an open redirect.
  if (redirect && redirect.startsWith('/') && !redirect.startsWith('//') && !redirect.startsWith('/\\')) {
    return redirect;
  }
  return HOME_ROUTE;
}

/** Unknown paths are taken as file paths: /docs/a.txt → /files/docs/a.txt. */
export function unknownRouteTarget(pathname: string): string {
  const path = pathname.startsWith('/') ? pathname : `/${pathname}`;
  return `/files${path}`;
}
