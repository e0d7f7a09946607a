import { Type, type Static } from '@sinclair/typebox';
import { Sorting } from './users.js';

export const FILE_TYPES = [
  'video',
  'audio',
  'image',
  'pdf',
  'text',
  'textImmutable',
  'blob',
  'invalid_link',
] as const;
export type FileType = (typeof FILE_TYPES)[number] | '';

export const CHECKSUM_ALGORITHMS = ['md5', 'sha1', 'sha256', 'sha512'] as const;
export type ChecksumAlgorithm = (typeof CHECKSUM_ALGORITHMS)[number];

/** algo query value of GET /api/raw -> file extension of the archive. */
export const ARCHIVE_FORMATS = {
  zip: '.zip',
  tar: '.tar',
  targz: '.tar.gz',
  tarbz2: '.tar.bz2',
  tarxz: '.tar.xz',
  tarlz4: '.tar.lz4',
  tarsz: '.tar.sz',
  tarbr: '.tar.br',
  tarzst: '.tar.zst',
} as const;
export type ArchiveFormat = keyof typeof ARCHIVE_FORMATS;

/**
 * Text files up to this size come with their `content`; bigger ones are still `text` (up to
 * 10 MiB) but open for download only, so that opening one costs the server bounded memory.
 */
export const TEXT_CONTENT_LIMIT = 5 * 1024 * 1024;

export const Resolution = Type.Object({ width: Type.Integer(), height: Type.Integer() });

const fileInfoFields = {
  path: Type.String(),
  name: Type.String(),
  size: Type.Number(),
  extension: Type.String(),
  modified: Type.String(),
  mode: Type.Number(),
  isDir: Type.Boolean(),
  isSymlink: Type.Boolean(),
  type: Type.String(),
  subtitles: Type.Optional(Type.Array(Type.String())),
  content: Type.Optional(Type.String()),
  checksums: Type.Optional(Type.Record(Type.String(), Type.String())),
  token: Type.Optional(Type.String()),
  resolution: Type.Optional(Resolution),
};

/** One entry of a directory listing. */
export const FileItem = Type.Object(fileInfoFields);
export type FileItem = Static<typeof FileItem>;

/** GET /api/resources{path}: a file, or a directory with its items. */
export const FileInfo = Type.Object({
  items: Type.Optional(Type.Array(FileItem)),
  numDirs: Type.Optional(Type.Integer()),
  numFiles: Type.Optional(Type.Integer()),
  sorting: Type.Optional(Sorting),
  ...fileInfoFields,
});
export type FileInfo = Static<typeof FileInfo>;

export const RecursiveEntry = Type.Object({
  path: Type.String(),
  name: Type.String(),
  size: Type.Number(),
  modified: Type.String(),
  isDir: Type.Boolean(),
});
export type RecursiveEntry = Static<typeof RecursiveEntry>;

/**
 * GET /api/usage: the file system's size and use; with a quota on the user's scope (an addition
 * of ours), `total` is the quota, `used` the bytes the scope holds (trash included), and `quota`
 * says so.
 */
export const Usage = Type.Object({
  total: Type.Number(),
  used: Type.Number(),
  quota: Type.Optional(Type.Number()),
});
export type Usage = Static<typeof Usage>;

/** One JSON line of GET /api/search (keys in this order). */
export const SearchHit = Type.Object({ dir: Type.Boolean(), path: Type.String() });
export type SearchHit = Static<typeof SearchHit>;
