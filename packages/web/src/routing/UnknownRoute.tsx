import { Navigate, useLocation } from 'react-router';
import { unknownRouteTarget } from './guards';

export function UnknownRoute() {
  const { pathname, search } = useLocation();
  return <Navigate to={`${unknownRouteTarget(pathname)}${search}`} replace />;
}
