import type { RouteReach } from '../auth/policy.js';

/**
 * The routes the app has, by path pattern, so that a request whose path is known but whose method
 * is not can be answered 405 (as File Browser's router did) instead of 404.
 */
export class RouteIndex {
  private readonly routes: { url: string; pattern: RegExp; methods: Set<string> }[] = [];
  /** `METHOD url` of the routes that declare no audit action (audit/http.ts). */
  private readonly undeclared = new Set<string>();
  /** What each `METHOD url` declared its callers reach (http/reach.ts). */
  private readonly reaches = new Map<string, { method: string; url: string; reach: RouteReach }>();

  add(method: string | string[], url: string, auditDeclared = false, reach?: RouteReach): void {
    const methods = Array.isArray(method) ? method : [method];
    const source = patternSource(url);
    let entry = this.routes.find((r) => r.pattern.source === source);
    if (!entry) {
      entry = { url, pattern: new RegExp(source), methods: new Set() };
      this.routes.push(entry);
    }
    for (const m of methods) {
      entry.methods.add(m.toUpperCase());
      if (!auditDeclared) this.undeclared.add(`${m.toUpperCase()} ${url}`);
      if (reach) this.reaches.set(`${m.toUpperCase()} ${url}`, { method: m.toUpperCase(), url, reach });
    }
  }

  /** Every `METHOD url` with the reach it declared, for the test that walks them all. */
  declaredReaches(): { method: string; url: string; reach: RouteReach }[] {
    return [...this.reaches.values()];
  }

  /**
   * The routes that may change state (any method but GET, HEAD and OPTIONS) and declare no audit
   * action, as `METHOD url`: the route-index test requires none.
   */
  unaudited(): string[] {
    return [...this.undeclared].filter((r) => !/^(GET|HEAD|OPTIONS) /.test(r)).sort();
  }

  /** The route patterns as registered (`/api/raw/*`), for tests that must cover every route. */
  urls(): string[] {
    return this.routes.map((r) => r.url);
  }

  /** Each route pattern as registered with the methods it takes, for tests of the API document. */
  entries(): { url: string; methods: string[] }[] {
    return this.routes.map((r) => ({ url: r.url, methods: [...r.methods].sort() }));
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

/**
 * Fastify's route syntax as a regular expression: ":name" is one segment (or what its "(regex)"
 * constraint allows), "*" anything.
 */
function patternSource(url: string): string {
  let out = '';
  for (let i = 0; i < url.length; i++) {
    const c = url[i]!;
    if (c === '*') {
      out += '.*';
    } else if (c === ':' && url[i + 1] === ':') {
      out += ':';
      i++;
    } else if (c === ':') {
      while (i + 1 < url.length && !'/-.('.includes(url[i + 1]!)) i++;
      if (url[i + 1] !== '(') {
        out += '[^/]+';
        continue;
      }
      let depth = 0;
      let constraint = '';
      for (i++; i < url.length; i++) {
        const d = url[i]!;
        const escaped = url[i - 1] === '\\';
        if (d === '(' && !escaped) depth++;
        if (d === ')' && !escaped) depth--;
        constraint += d;
        if (depth === 0) break;
      }
      out += `(?:${constraint.slice(1, -1).replace(/^\^/, '').replace(/\$$/, '')})`;
    } else {
      out += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
    }
  }
  return `^${out}$`;
}
