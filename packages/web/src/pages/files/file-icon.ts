import type { FileItem } from '@filebrowser/contract';

/** What an entry is, as far as its icon goes. */
export type FileKind =
  | 'folder'
  | 'image'
  | 'video'
  | 'audio'
  | 'pdf'
  | 'text'
  | 'code'
  | 'archive'
  | 'spreadsheet'
  | 'document'
  | 'presentation'
  | 'font'
  | 'diskImage'
  | 'executable'
  | 'brokenLink'
  | 'unknown';

/** Material Icons glyphs (the font the app ships), one per kind. */
export const KIND_ICONS: Record<FileKind, string> = {
  folder: 'folder',
  image: 'image',
  video: 'movie',
  audio: 'audiotrack',
  pdf: 'picture_as_pdf',
  text: 'description',
  code: 'code',
  archive: 'folder_zip',
  spreadsheet: 'table_chart',
  document: 'article',
  presentation: 'slideshow',
  font: 'font_download',
  diskImage: 'album',
  executable: 'terminal',
  brokenLink: 'link_off',
  unknown: 'insert_drive_file',
};

const EXTENSIONS: Partial<Record<FileKind, string>> = {
  image:
    'jpg jpeg jpe jfif png apng gif webp bmp svg svgz tif tiff ico heic heif avif jxl psd xcf raw cr2 cr3 nef arw dng orf rw2',
  video: 'mp4 m4v mkv webm mov avi wmv flv mpg mpeg mpe 3gp 3g2 ogv m2ts mts vob',
  audio: 'mp3 wav flac ogg oga opus m4a aac wma aif aiff alac ape mid midi amr',
  pdf: 'pdf',
  text: 'txt text md markdown rst log nfo srt vtt ass sub tex',
  code: 'js mjs cjs jsx ts mts cts tsx py pyw rb go rs c h cc cpp cxx hh hpp hxx cs java kt kts swift m mm php pl pm lua sh bash zsh fish ps1 psm1 sql html htm xhtml css scss sass less json jsonc json5 yaml yml toml xml xsl ini conf cfg env properties vue svelte astro dart r scala sc hs ex exs erl hrl clj cljs edn vb fs fsx asm s zig nim jl groovy gradle tf hcl nix diff patch cmake mk dockerfile makefile',
  archive: 'zip tar gz tgz bz2 tbz tbz2 xz txz zst tzst lz lzma lz4 7z rar cab br z jar war ar cpio',
  spreadsheet: 'xls xlsx xlsm xlsb xlt xltx ods ots fods csv tsv numbers',
  document: 'doc docx docm dot dotx odt ott fodt rtf pages epub mobi azw3 djvu wpd',
  presentation: 'ppt pptx pptm pps ppsx pot potx odp otp fodp key',
  font: 'ttf otf woff woff2 eot fon pfb pfm',
  diskImage: 'iso img dmg vhd vhdx vmdk vdi qcow qcow2 toast',
  executable: 'exe msi com bat cmd apk aab appimage deb rpm run bin app elf so dll dylib',
};

const KIND_BY_EXTENSION = new Map<string, FileKind>(
  Object.entries(EXTENSIONS).flatMap(([kind, list]) =>
    list.split(' ').map((extension): [string, FileKind] => [extension, kind as FileKind]),
  ),
);

/** File names that say what they are without an extension. */
const KIND_BY_NAME = new Map<string, FileKind>([
  ['makefile', 'code'],
  ['dockerfile', 'code'],
  ['containerfile', 'code'],
  ['jenkinsfile', 'code'],
  ['vagrantfile', 'code'],
  ['gemfile', 'code'],
  ['rakefile', 'code'],
  ['readme', 'text'],
  ['license', 'text'],
  ['licence', 'text'],
  ['copying', 'text'],
  ['changelog', 'text'],
  ['authors', 'text'],
]);

/** File Browser's own detected types, for what neither the name nor the extension tells. */
const KIND_BY_TYPE: Record<string, FileKind> = {
  image: 'image',
  video: 'video',
  audio: 'audio',
  pdf: 'pdf',
  text: 'text',
  textImmutable: 'text',
  invalid_link: 'brokenLink',
};

/** A MIME type's kind, for callers that know one (uploads, shares). */
function kindOfMime(mime: string): FileKind | undefined {
  const type = mime.split(';')[0]!.trim().toLowerCase();
  const [major] = type.split('/');
  if (type === 'application/pdf') return 'pdf';
  if (major === 'image' || major === 'video' || major === 'audio' || major === 'font') {
    return major === 'font' ? 'font' : major;
  }
  if (/(zip|tar|compressed|x-7z|x-rar|gzip|bzip|x-xz|zstd)/.test(type)) return 'archive';
  if (/(spreadsheet|excel|text\/csv|tab-separated)/.test(type)) return 'spreadsheet';
  if (/(presentation|powerpoint)/.test(type)) return 'presentation';
  if (/(wordprocessing|msword|opendocument\.text|rtf|epub)/.test(type)) return 'document';
  if (/(x-iso9660|x-apple-diskimage|x-raw-disk)/.test(type)) return 'diskImage';
  if (/(x-msdownload|x-executable|x-sharedlib|x-msi|vnd\.android\.package|x-mach-binary)/.test(type)) {
    return 'executable';
  }
  if (
    /(javascript|typescript|json|xml|x-sh|x-python|x-c|x-java|x-php|x-ruby|yaml|toml|html|css)/.test(type)
  ) {
    return 'code';
  }
  if (major === 'text') return 'text';
  return undefined;
}

/** The part of a name after its last dot, lower-cased; none for ".bashrc" or "notes". */
function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
}

export interface KindSource extends Pick<FileItem, 'isDir' | 'type' | 'name'> {
  mime?: string;
}

/**
 * What kind of entry this is: a folder, then what the name says (extension, or well-known
 * names such as Makefile), then the type the server detected, then the MIME type if known.
 */
export function fileKind(item: KindSource): FileKind {
  if (item.isDir) return 'folder';
  if (item.type === 'invalid_link') return 'brokenLink';
  const fromName = KIND_BY_EXTENSION.get(extensionOf(item.name)) ?? KIND_BY_NAME.get(item.name.toLowerCase());
  if (fromName) return fromName;
  return KIND_BY_TYPE[item.type] ?? (item.mime ? kindOfMime(item.mime) : undefined) ?? 'unknown';
}

/** The Material icon that stands for an entry of a listing. */
export function fileIcon(item: KindSource): string {
  return KIND_ICONS[fileKind(item)];
}

/** Dotfiles: shown dimmed when the user has not hidden them. */
export function isDotfile(name: string): boolean {
  return name.startsWith('.');
}
