import type { ReactNode } from 'react';
import { Navigate, Outlet, useLocation } from 'react-router';
import { useAuthStore } from '../stores/auth';
import { decideAccess, type RouteAccess } from './guards';

/**
 * Renders its children (or nested routes) when the current user may see them, else replaces the
 * history entry with the redirect, so that Back after a logout never shows a protected page.
 */
export function Guard({ access, children }: { access: RouteAccess; children?: ReactNode }) {
  const user = useAuthStore((state) => state.user);
  const location = useLocation();
  const decision = decideAccess(access, user, `${location.pathname}${location.search}`);
  if (!decision.allow) return <Navigate to={decision.redirect} replace />;
  return children ?? <Outlet />;
}
