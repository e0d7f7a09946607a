import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse, onSendAsyncHookHandler } from 'fastify';
import { OTHER_METHODS_KEY, openApiPath } from '../src/http/openapi/document.js';
import { OPENAPI_URL } from '../src/http/openapi/routes.js';

/** The route Fastify matched for a request, by the raw request inject gave it. */
export interface MatchedRoute {
  method: string;
  url: string;
}

interface Content {
  schema?: unknown;
}
interface ResponseDoc {
  description: string;
  content?: Record<string, Content>;
}
interface Operation {
  responses: Record<string, ResponseDoc>;
}
type PathItem = Record<string, unknown>;

const mediaOf = (contentType: string | undefined) => (contentType ?? '').split(';')[0]!.trim().toLowerCase();
const isJson = (media: string) => media === 'application/json' || media.endsWith('+json');

/**
 * Checks real answers against the API document the app serves: the route and status must be in
 * it, the Content-Type one it names, and a JSON body must validate against the schema it gives.
 * The test app turns it on for every inject (test/helpers.ts), so API tests check the document
 * as a side effect of what they test.
 */
export class ResponseChecker {
  private readonly matched = new WeakMap<object, MatchedRoute>();
  private paths: Record<string, PathItem> | undefined;
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly compiled = new Map<unknown, ValidateFunction>();

  /** The onSend hook that remembers which route answered each request. */
  readonly onSend: onSendAsyncHookHandler = async (request, _reply, payload) => {
    const { url, method } = request.routeOptions;
    if (url !== undefined) this.matched.set(request.raw, { url, method: request.method ?? String(method) });
    return payload;
  };

  constructor(private readonly inject: FastifyInstance['inject']) {}

  private async document(): Promise<Record<string, PathItem>> {
    if (!this.paths) {
      const res = await this.inject({ method: 'GET', url: OPENAPI_URL });
      this.paths = (JSON.parse(res.body) as { paths: Record<string, PathItem> }).paths;
    }
    return this.paths;
  }

  private validator(schema: unknown): ValidateFunction {
    let fn = this.compiled.get(schema);
    if (!fn) {
      fn = this.ajv.compile(schema as object);
      this.compiled.set(schema, fn);
    }
    return fn;
  }

  /** What is wrong with this answer according to the document; empty when nothing is. */
  async problems(res: LightMyRequestResponse): Promise<string[]> {
    const route = this.matched.get(res.raw.req);
    // Answers of no route (404 and 405 of the not-found handler) are not the document's business.
    if (!route) return [];
    const paths = await this.document();
    const { path } = openApiPath(route.url);
    const item = paths[path];
    const method = route.method.toLowerCase();
    const op = (item?.[method] ??
      (item?.[OTHER_METHODS_KEY] as Record<string, unknown> | undefined)?.[route.method.toUpperCase()]) as
      Operation | undefined;
    const where = `${route.method} ${path} → ${res.statusCode}`;
    if (!op) return [`${route.method} ${path} is not in the API document`];
    const code = res.statusCode;
    const declared =
      op.responses[String(code)] ??
      op.responses[`${Math.floor(code / 100)}XX`] ??
      (code >= 400 ? op.responses.default : undefined);
    if (!declared) return [`${where}: status not in the API document`];
    const body = res.rawPayload;
    if (method === 'head' || body.length === 0) return [];
    if (!declared.content)
      return [`${where}: the document says no body, the answer has ${body.length} bytes`];
    const media = mediaOf(res.headers['content-type'] as string | undefined);
    const entry = Object.entries(declared.content).find(
      ([type]) =>
        type === media || type === '*/*' || (type.endsWith('/*') && media.startsWith(type.slice(0, -1))),
    );
    if (!entry) {
      return [
        `${where}: Content-Type ${media || '(none)'} is not one of ${Object.keys(declared.content).join(', ')}`,
      ];
    }
    const schema = entry[1].schema;
    if (!schema || !isJson(media)) return [];
    let value: unknown;
    try {
      value = JSON.parse(body.toString('utf8'));
    } catch {
      return [`${where}: the body is not JSON`];
    }
    const validate = this.validator(schema);
    if (validate(value)) return [];
    return [`${where}: ${this.ajv.errorsText(validate.errors)}`];
  }
}

/**
 * The check of every answer against the API document, for a test app: pass `onSend` to buildApp,
 * then `install` on the built app. Every `app.inject(options)` then fails the test when its
 * answer is not as the document says (the chained form of inject stays unchecked).
 */
export function answerCheck(): { onSend: onSendAsyncHookHandler; install(app: FastifyInstance): void } {
  let unchecked: FastifyInstance['inject'] | undefined;
  const checker = new ResponseChecker(((opts: InjectOptions) =>
    unchecked!(opts)) as FastifyInstance['inject']);
  return {
    onSend: checker.onSend,
    install(app) {
      const inject = app.inject.bind(app) as FastifyInstance['inject'];
      unchecked = inject;
      const loose = inject as (...args: unknown[]) => unknown;
      const checked = (opts?: InjectOptions | string, callback?: unknown) => {
        if (opts === undefined || callback !== undefined) return loose(opts, callback);
        return inject(opts).then(async (res) => {
          const problems = await checker.problems(res);
          if (problems.length > 0) {
            throw new Error(`the answer is not as the API document says: ${problems.join('; ')}`);
          }
          return res;
        });
      };
      Object.assign(app, { inject: checked });
    },
  };
}
