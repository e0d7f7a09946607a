import { MEDIA, StatusText } from '@filebrowser/contract';
import type { TSchema } from '@sinclair/typebox';

/**
 * What a route declares beyond what Fastify enforces, for the API document only. Fastify leaves
 * these keys of a route's schema alone.
 */
declare module 'fastify' {
  interface FastifySchema {
    summary?: string;
    tags?: string[];
    /**
     * A body the route reads itself, so Fastify must not validate it: file contents, WebDAV's
     * XML, or JSON read leniently because old clients send odd bodies (login, share links).
     */
    readBody?: ReadBody;
  }
}

export interface ReadBody {
  description: string;
  /** Media type → the schema of its content (none for raw bytes). */
  content: Record<string, TSchema | undefined>;
}

/**
 * An answer as a route's `schema.response` holds it. JSON answers are the contract's TypeBox
 * schema itself (Fastify serializes with it); the others use Fastify's `content` form, which
 * Fastify never applies to the strings, buffers and streams these routes send.
 */
export type Answer = TSchema | { description: string; content?: Record<string, { schema: TSchema }> };

/** Raw content has no JSON schema; Fastify's `content` form wants one, so it gets the empty one. */
const ANY: TSchema = {} as TSchema;

/** File Browser's status line (`sendStatus`), the answer of most writes and of every error. */
export function statusLine(description: string): Answer {
  return { description, content: { [MEDIA.text]: { schema: StatusText } } };
}

/** Bytes of the given media types, described in words: no JSON schema. */
export function raw(description: string, ...mediaTypes: string[]): Answer {
  return { description, content: Object.fromEntries(mediaTypes.map((t) => [t, { schema: ANY }])) };
}

/** Text of a known shape (a token, JSON lines) that is not sent as JSON. */
export function text(description: string, schema: TSchema, mediaType: string = MEDIA.text): Answer {
  return { description, content: { [mediaType]: { schema } } };
}

/** An answer with no body at all (204, a redirect, a HEAD). */
export function empty(description: string): Answer {
  return { description };
}

/** The folder redirect of every route prefix asked without its path (contract 1.1). */
export const TO_FOLDER = { 301: empty('moved to the same URL with a trailing "/"') };

/** A body read as bytes by the route. */
export function rawBody(description: string, ...mediaTypes: string[]): ReadBody {
  return { description, content: Object.fromEntries(mediaTypes.map((t) => [t, undefined])) };
}

/** A JSON body the route reads leniently (any Content-Type label, odd bodies tolerated). */
export function lenientJson(description: string, schema: TSchema): ReadBody {
  return { description, content: { [MEDIA.json]: schema } };
}

/**
 * The answers of a file download (raw, preview, subtitle, public share): the bytes, a part of
 * them for a Range, nothing for a fresh cached copy, and File Browser's 202 for a user without
 * the download permission.
 */
export function downloadAnswers(description: string, ...mediaTypes: string[]) {
  return {
    200: raw(description, ...mediaTypes),
    202: statusLine('refused: the user may not download (File Browser’s answer)'),
    206: raw('the requested range (multipart/byteranges for several)', ...mediaTypes, 'multipart/byteranges'),
    304: empty('not modified since the copy the client has'),
  };
}
