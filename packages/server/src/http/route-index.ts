/**
 * The routes the app has, by path pattern, so that a request whose path is known but whose method
 * is not can be answered 405 (as File Browser's router did) instead of 404.
 */
export class RouteIndex {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];

  add(method: string | string[], url: string): void {
    const methods = Array.isArray(method) ? method : [method];
    const source = patternSource(url);
    let entry = this.routes.find((r) => r.pattern.source === source);
    if (!entry) {
      entry = { pattern: new RegExp(source), methods: new Set() };
      this.routes.push(entry);
    }
    for (const m of methods) entry.methods.add(m.toUpperCase());
  }

  /** Every method some route accepts for this path; empty when no route has the path at all. */
  allowedMethods(pathname: string): string[] {
    const methods = new Set<string>();
    for (const route of this.routes) {
      if (route.pattern.test(pathname)) route.methods.forEach((m) => methods.add(m));
    }
    return [...methods].sort();
  }
}

/** Fastify's route syntax as a regular expression: ":name" is one segment, "*" anything. */
function patternSource(url: string): string {
  let out = '';
  for (let i = 0; i < url.length; i++) {
    const c = url[i]!;
    if (c === '*') {
      out += '.*';
    } else if (c === ':' && url[i + 1] !== ':') {
      // A parameter runs to the next separator; a "(regex)" constraint is read as any segment.
      while (i + 1 < url.length && url[i + 1] !== '/' && url[i + 1] !== '-' && url[i + 1] !== '.') i++;
      out += '[^/]+';
    } else if (c === ':') {
      out += ':';
      i++;
    } else {
      out += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return `^${out}$`;
}
