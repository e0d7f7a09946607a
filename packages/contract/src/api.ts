import { Type, type Static } from '@sinclair/typebox';

/**
 * The pieces of the wire format that are not one area's: path and query parameters, plain-text
 * answers, and the media types of the answers that are not JSON. The server declares its routes
 * with these, and the OpenAPI document at `/api/openapi.json` is generated from those declarations.
 */

/**
 * File Browser's plain-text status body, `<code> <reason>\n`, with ` (message)\n` on an error:
 * what every route answers when it has nothing else to say, and every error.
 */
export const StatusText = Type.String({
  description: 'File Browser status line: "<code> <reason>", and " (<message>)" on an error',
  examples: ['200 OK\n', '403 Forbidden\n', '400 Bad Request (password is required)\n'],
});

/** The `{path}` of a wildcard route (`/api/resources/{path}`): a path in the user's scope, `/` allowed. */
export const PathParams = Type.Object({
  '*': Type.String({ description: 'a path below the route, slashes included' }),
});
export type PathParams = Static<typeof PathParams>;

/** A decimal id in the path (users). */
export const NumericIdParams = Type.Object({ id: Type.String({ pattern: '^[0-9]+$' }) });
export type NumericIdParams = Static<typeof NumericIdParams>;

/**
 * A query value. Repeated, the first one counts, as in File Browser (Go's `Query().Get`): a
 * client that sends one twice is not refused.
 */
const Query = (description: string) =>
  Type.Optional(
    Type.Union([Type.String(), Type.Array(Type.String())], {
      description: `${description}; repeated, the first counts`,
    }),
  );

/** Only the exact text `true` turns a flag query on, as in File Browser. */
const Flag = (description: string) => Query(`${description} ("true")`);

/** GET /api/resources{path} */
export const ResourceQuery = Type.Object({
  checksum: Query('md5, sha1, sha256 or sha512: answer with that checksum'),
});

/** POST /api/resources{path}: a file upload, or a folder when the path ends with `/`. */
export const ResourceUploadQuery = Type.Object({ override: Flag('replace an existing file') });

/** PATCH /api/resources{path} */
export const ResourcePatchQuery = Type.Object({
  action: Query('copy or rename (rename is a move)'),
  destination: Query('the target path, percent-encoded once more'),
  override: Flag('replace an existing target'),
  rename: Flag('pick a free name when the target exists'),
});

/** GET /api/raw{path} and GET /api/public/dl/{hash}{path} */
export const DownloadQuery = Type.Object({
  files: Query('comma-separated items of the folder to archive'),
  algo: Query('archive format: zip, tar, targz, …'),
  inline: Flag('Content-Disposition inline instead of attachment'),
  progress: Query('a folder archive: follow it as the job of this id (GET /api/jobs/{id})'),
});

/** The public share routes: the token a share password earned, as the old client sends it. */
export const PublicShareQuery = Type.Object({
  token: Query('the token that a share password earned'),
  ...DownloadQuery.properties,
});

/** GET /api/preview/{size}{path} */
export const PreviewParams = Type.Object({
  size: Type.String({ description: 'thumb or big' }),
  '*': Type.String({ description: 'the path of the image or video' }),
});
export const PreviewQuery = Type.Object({
  inline: Flag('Content-Disposition inline instead of attachment'),
  key: Query('a cache-buster of the client, ignored'),
});

/** GET /api/subtitle{path} */
export const InlineQuery = Type.Object({ inline: Flag('Content-Disposition inline instead of attachment') });

/** GET /api/search{path} */
export const SearchQuery = Type.Object({
  query: Query('words, "type:image"-style filters, "case:sensitive"'),
});

/** GET /api/usage{path} */
export const UsageQuery = Type.Object({
  recount: Flag('walk the scope again before answering (changes made outside the server)'),
});

/** POST /api/tus{path} */
export const TusQuery = Type.Object({ override: Flag('replace an existing file') });

/** GET /health */
export const HealthStatus = Type.Object({
  status: Type.String({ description: 'OK, or unavailable' }),
  reason: Type.Optional(Type.String()),
  instance: Type.Optional(
    Type.String({ description: 'the id of the server that answered, among the instances on its database' }),
  ),
});
export type HealthStatus = Static<typeof HealthStatus>;

/** The media types of the answers that are not JSON. */
export const MEDIA = {
  text: 'text/plain',
  /** A file as stored: its own type (from its name), or application/octet-stream. */
  file: '*/*',
  archive: 'application/octet-stream',
  image: 'image/*',
  vtt: 'text/vtt',
  jwt: 'text/plain',
  /** GET /api/search: one JSON object per line (SearchHit), as found, with blank keep-alive lines. */
  jsonLines: 'text/plain',
  html: 'text/html',
  javascript: 'text/javascript',
  manifest: 'application/manifest+json',
  xml: 'application/xml',
  prometheus: 'text/plain',
  json: 'application/json',
  csv: 'text/csv',
} as const;
