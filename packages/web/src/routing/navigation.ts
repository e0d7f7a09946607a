/** The current client route, without the base URL (for code outside the router). */
export function currentRoute(baseURL: string): string {
  const { pathname, search } = window.location;
  const path = baseURL && pathname.startsWith(baseURL) ? pathname.slice(baseURL.length) || '/' : pathname;
  return `${path}${search}`;
}
