import { STATUS_CODES } from 'node:http';
import { MEDIA, StatusText } from '@filebrowser/contract';
import type { FastifySchema } from 'fastify';

/** A route as Fastify registered it (its `onRoute` options). */
export interface RouteRecord {
  method: string | string[];
  url: string;
  schema?: FastifySchema;
}

type Json = Record<string, unknown>;

/** The methods an OpenAPI 3.1 path item has fields for; WebDAV's others go to an extension. */
const OPENAPI_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
/** Where the methods OpenAPI 3.1 has no field for are listed (the field OpenAPI 3.2 added). */
export const OTHER_METHODS_KEY = 'x-additionalOperations';
/** The OpenAPI name of Fastify's wildcard parameter `*`. */
export const WILDCARD_NAME = 'path';

/** Fastify's route syntax as an OpenAPI path template and its parameters' names, in order. */
export function openApiPath(url: string): { path: string; names: string[] } {
  let out = '';
  const names: string[] = [];
  for (let i = 0; i < url.length; i++) {
    const c = url[i]!;
    if (c === '*') {
      out += `{${WILDCARD_NAME}}`;
      names.push(WILDCARD_NAME);
    } else if (c === ':' && url[i + 1] === ':') {
      out += ':';
      i++;
    } else if (c === ':') {
      let name = '';
      while (i + 1 < url.length && !'/-.('.includes(url[i + 1]!)) name += url[++i];
      if (url[i + 1] === '(') {
        // The constraint is the parameter schema's business (a pattern), not the path's.
        let depth = 0;
        for (i++; i < url.length; i++) {
          if (url[i] === '(' && url[i - 1] !== '\\') depth++;
          if (url[i] === ')' && url[i - 1] !== '\\') depth--;
          if (depth === 0) break;
        }
      }
      out += `{${name}}`;
      names.push(name);
    } else {
      out += c;
    }
  }
  return { path: out, names };
}

/** A TypeBox schema as plain JSON (its symbol keys dropped), so the document can be served as is. */
const plain = (schema: unknown): Json => JSON.parse(JSON.stringify(schema ?? {})) as Json;

const isEmptySchema = (schema: unknown) =>
  !schema || (typeof schema === 'object' && Object.keys(schema).length === 0);

function parameters(schema: FastifySchema | undefined): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query', source: unknown) => {
    const object = source as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    for (const [key, value] of Object.entries(object?.properties ?? {})) {
      const name = key === '*' ? WILDCARD_NAME : key;
      const { description, ...rest } = plain(value);
      out.push({
        name,
        in: where,
        required: where === 'path' || (object?.required ?? []).includes(key),
        ...(description !== undefined && { description }),
        schema: rest,
      });
    }
  };
  add('path', schema?.params);
  add('query', schema?.querystring);
  return out;
}

function requestBody(schema: FastifySchema | undefined): Json | undefined {
  if (schema?.body) {
    return { required: true, content: { [MEDIA.json]: { schema: plain(schema.body) } } };
  }
  if (schema?.readBody) {
    const content = Object.fromEntries(
      Object.entries(schema.readBody.content).map(([type, s]) => [type, s ? { schema: plain(s) } : {}]),
    );
    return { description: schema.readBody.description, content };
  }
  return undefined;
}

function response(code: string, declared: unknown, head: boolean): Json {
  const answer = declared as { description?: string; content?: Record<string, { schema?: unknown }> };
  const description = answer.description ?? STATUS_CODES[Number(code)] ?? code;
  if (head) return { description };
  if (answer.content) {
    const content = Object.fromEntries(
      Object.entries(answer.content).map(([type, c]) => [
        type,
        isEmptySchema(c.schema) ? {} : { schema: plain(c.schema) },
      ]),
    );
    return { description, content };
  }
  // A declaration with nothing but words is an answer without a body.
  if (Object.keys(answer).every((k) => k === 'description')) return { description };
  return { description, content: { [MEDIA.json]: { schema: plain(declared) } } };
}

function operation(method: string, record: RouteRecord): Json {
  const schema = record.schema;
  const head = method === 'head';
  const responses: Json = {};
  for (const [code, declared] of Object.entries((schema?.response ?? {}) as Record<string, unknown>)) {
    responses[code] = response(code, declared, head);
  }
  // app.ts sends a path with "//", "." or ".." segments to its clean form, before any handler;
  // only a route with parameters can match such a path.
  if (openApiPath(record.url).names.length > 0) {
    responses['301'] ??= { description: 'moved to the clean form of a path with "//", "." or ".." segments' };
  }
  responses.default ??= head
    ? { description: 'an error' }
    : {
        description: 'an error: its status line, and why when the server may say',
        content: { [MEDIA.text]: { schema: plain(StatusText) } },
      };
  const body = head ? undefined : requestBody(schema);
  const params = parameters(schema);
  const segment = /^\/api\/(?:public\/)?([^/]+)/.exec(record.url)?.[1] ?? record.url.split('/')[1] ?? '';
  return {
    ...(schema?.summary && { summary: schema.summary }),
    tags: schema?.tags ?? [segment || 'app'],
    ...(params.length > 0 && { parameters: params }),
    ...(body && { requestBody: body }),
    responses,
  };
}

export interface DocumentInfo {
  title: string;
  version: string;
  /** The base URL the API is served under ('' at the root). */
  baseURL: string;
}

/**
 * The OpenAPI 3.1 document of the given routes, from the schemas each route declared: params,
 * query, body and answers are the contract's TypeBox schemas (JSON Schema 2020-12 compatible).
 */
export function openApiDocument(routes: readonly RouteRecord[], info: DocumentInfo): Json {
  const paths: Record<string, Json> = {};
  for (const record of routes) {
    const { path } = openApiPath(record.url);
    const item = (paths[path] ??= {});
    const methods = Array.isArray(record.method) ? record.method : [record.method];
    for (const m of methods) {
      const method = m.toLowerCase();
      const op = operation(method, record);
      if (OPENAPI_METHODS.has(method)) {
        item[method] = op;
      } else {
        const others = (item[OTHER_METHODS_KEY] ??= {}) as Json;
        others[m.toUpperCase()] = op;
      }
    }
  }
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
  return {
    openapi: '3.1.0',
    info: {
      title: `${info.title} API`,
      version: info.version,
      description:
        'Generated from the route declarations of this server. Sign in with POST /api/login ' +
        '(the answer is a token for the X-Auth header) or send a personal API token as ' +
        '"Authorization: Bearer fbt_…". Errors answer text/plain with their status line.',
    },
    servers: [{ url: info.baseURL || '/' }],
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'header', name: 'X-Auth' },
        cookie: { type: 'apiKey', in: 'cookie', name: 'auth' },
        apiToken: { type: 'http', scheme: 'bearer' },
      },
    },
    security: [{ session: [] }, { cookie: [] }, { apiToken: [] }, {}],
    paths: sorted,
  };
}
