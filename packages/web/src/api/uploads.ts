import { AUTH_HEADER, RENEW_HEADER, type RecursiveEntry, type TusSettings } from '@filebrowser/contract';
import { encodePath, trimTrailingSlash } from '../utils/paths';
import {
  ApiError,
  apiURL,
  NO_CONNECTION_MESSAGE,
  noteUploadResponse,
  requestJson,
  uploadSessionToken,
} from './client';

export const TUS_SETTINGS_MISSING = 'Tus.io settings are not defined';
export const CONNECTION_ABORTED_MESSAGE = '001 Connection aborted';

/** A running upload of one file. */
export interface UploadHandle {
  /** Settles when the file is in place, or with the reason it is not. */
  done: Promise<void>;
  /** Stops the transfer; a started resumable upload is also cancelled on the server. */
  abort: () => void;
}

export type ProgressHandler = (bytesSent: number) => void;

export interface UploadFileOptions {
  /** Replace a file that exists at the target. */
  override: boolean;
  /** The start-up `TusSettings`; resumable uploads cannot go without them. */
  tusSettings: TusSettings | null | undefined;
  onProgress: ProgressHandler;
  /** The page's protocol (defaults to the current page's). */
  protocol?: string;
}

/** Every entry inside a folder, recursively (for the clash check of folder uploads). */
export function fetchTree(path: string, signal?: AbortSignal): Promise<RecursiveEntry[]> {
  return requestJson<RecursiveEntry[]>(`/api/resources/recursive${encodePath(trimTrailingSlash(path))}`, {
    signal,
  });
}

/**
 * Resumable uploads need an http(s) page (not, say, a page opened from disk) and content the
 * client can slice (a Blob); anything else goes as one plain POST.
 */
export function canUseTus(content: unknown, protocol: string = window.location.protocol): boolean {
  return /^https?:$/.test(protocol) && typeof XMLHttpRequest !== 'undefined' && content instanceof Blob;
}

export function abortError(): DOMException {
  return new DOMException('The upload was aborted.', 'AbortError');
}

/** Uploads one file (or text) to a virtual path, reporting the bytes sent as they go. */
export function uploadFile(path: string, content: Blob | string, options: UploadFileOptions): UploadHandle {
  if (!canUseTus(content, options.protocol)) return postUpload(path, content, options);
  let handle: UploadHandle | null = null;
  let aborted = false;
  // tus-js-client is loaded with the first resumable upload.
  const done = import('./tus-upload').then(({ tusUpload }) => {
    if (aborted) throw abortError();
    handle = tusUpload(path, content as Blob, options);
    return handle.done;
  });
  return {
    done,
    abort: () => {
      aborted = true;
      handle?.abort();
    },
  };
}

/**
 * A plain `POST /api/resources{path}` with the whole content as the body, through XHR because
 * fetch cannot report upload progress (contract 5.3: 200 when done, 409 when the name is taken).
 */
export function postUpload(path: string, content: Blob | string, options: UploadFileOptions): UploadHandle {
  const xhr = new XMLHttpRequest();
  let aborted = false;
  const done = (async () => {
    const token = await uploadSessionToken();
    if (aborted) throw abortError();
    return new Promise<void>((resolve, reject) => {
      xhr.open('POST', apiURL(`/api/resources${encodePath(path)}?override=${options.override}`));
      if (token) xhr.setRequestHeader(AUTH_HEADER, token);
      xhr.upload.onprogress = (event) => options.onProgress(event.loaded);
      xhr.onload = () => {
        noteUploadResponse(xhr.status, xhr.getResponseHeader(RENEW_HEADER), token);
        const text = xhr.responseText.trim();
        const message = text && !text.startsWith('<') ? text : `${xhr.status} ${xhr.statusText}`.trim();
        if (xhr.status >= 200 && xhr.status < 300) resolve();
        else if (xhr.status === 0) reject(new ApiError(0, NO_CONNECTION_MESSAGE));
        else reject(new ApiError(xhr.status, message));
      };
      xhr.onerror = () => reject(new ApiError(0, CONNECTION_ABORTED_MESSAGE));
      xhr.onabort = () => reject(abortError());
      xhr.send(content);
    });
  })();
  return {
    done,
    abort: () => {
      aborted = true;
      xhr.abort();
    },
  };
}
