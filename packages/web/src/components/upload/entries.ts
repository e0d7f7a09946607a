/**
 * Turning what the user picked or dropped into a flat list of upload entries. Folders are walked
 * here, in the browser: every file becomes one entry with its path relative to the destination.
 */

/** One thing to upload: a file, or a folder to create (empty folders of a dropped tree). */
export interface UploadEntry {
  /** The path inside the destination folder, '/'-separated, without a leading slash: "a.txt", "photos/2024/a.jpg". */
  relativePath: string;
  /** The content; absent for a folder. */
  file?: File;
}

/** Files chosen through an input; a folder input fills `webkitRelativePath` ("photos/2024/a.jpg"). */
export function entriesFromFiles(files: Iterable<File>): UploadEntry[] {
  return Array.from(files, (file) => ({
    relativePath: cleanRelative(file.webkitRelativePath || file.name),
    file,
  }));
}

/** Whether a drag carries files from outside the page (and not, say, items of the listing). */
export function carriesFiles(dataTransfer: DataTransfer | null): boolean {
  return !!dataTransfer && Array.from(dataTransfer.types).includes('Files');
}

function cleanRelative(path: string): string {
  return path
    .replace(/\\/g, '/')
    .replace(/^\/+/, '')
    .replace(/\/{2,}/g, '/');
}

/** The subset of the File and Directory Entries API a drop gives. */
interface EntryLike {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
}
interface FileEntryLike extends EntryLike {
  file(success: (file: File) => void, failure?: (error: unknown) => void): void;
}
interface DirectoryEntryLike extends EntryLike {
  createReader(): {
    readEntries(success: (entries: EntryLike[]) => void, failure?: (error: unknown) => void): void;
  };
}

function readFile(entry: FileEntryLike): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

/** A directory reader hands out its entries in batches (100 in Chromium) until an empty one. */
async function readDirectory(entry: DirectoryEntryLike): Promise<EntryLike[]> {
  const reader = entry.createReader();
  const all: EntryLike[] = [];
  for (;;) {
    const batch = await new Promise<EntryLike[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) return all;
    all.push(...batch);
  }
}

async function walk(entry: EntryLike, prefix: string, out: UploadEntry[]): Promise<void> {
  const relativePath = `${prefix}${entry.name}`;
  if (entry.isFile) {
    out.push({ relativePath, file: await readFile(entry as FileEntryLike) });
    return;
  }
  if (!entry.isDirectory) return;
  const children = await readDirectory(entry as DirectoryEntryLike);
  // An empty folder is created as such; a folder with content comes with its files.
  if (children.length === 0) out.push({ relativePath });
  for (const child of children) await walk(child, `${relativePath}/`, out);
}

/**
 * The entries of a drop. Must be called during the drop event: the browser empties the
 * DataTransfer once the handler returns, so the items are taken at once and read afterwards.
 */
export function entriesFromDataTransfer(dataTransfer: DataTransfer): Promise<UploadEntry[]> {
  const roots: (EntryLike | File)[] = [];
  const items = Array.from(dataTransfer.items ?? []);
  if (items.length > 0) {
    for (const item of items) {
      if (item.kind !== 'file') continue;
      // Files a script put into the DataTransfer have no file system entry; take the file.
      const entry = typeof item.webkitGetAsEntry === 'function' ? item.webkitGetAsEntry() : null;
      const root = entry ?? item.getAsFile();
      if (root) roots.push(root);
    }
  } else {
    roots.push(...Array.from(dataTransfer.files));
  }

  return (async () => {
    const out: UploadEntry[] = [];
    for (const root of roots) {
      if (root instanceof File) out.push({ relativePath: cleanRelative(root.name), file: root });
      else await walk(root, '', out);
    }
    return out;
  })();
}
