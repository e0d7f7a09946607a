import { AUTH_HEADER, RENEW_HEADER } from '@filebrowser/contract';
import * as tus from 'tus-js-client';
import { encodePath } from '../utils/paths';
import { retryDelays } from '../utils/upload-retry';
import {
  ApiError,
  apiURL,
  NO_CONNECTION_MESSAGE,
  noteUploadResponse,
  request,
  sessionTokenChanged,
  uploadSessionToken,
} from './client';
import { abortError, TUS_SETTINGS_MISSING, type UploadFileOptions, type UploadHandle } from './uploads';

const TUS_VERSION = '1.0.0';

/** Why a tus request failed, in the words of the server when it answered. */
function tusFailure(error: Error): string {
  const response = error instanceof tus.DetailedError ? error.originalResponse : null;
  if (response) {
    const text = response.getBody()?.trim();
    return text && !text.startsWith('<') ? text : String(response.getStatus());
  }
  if (error instanceof tus.DetailedError && error.originalRequest) return NO_CONNECTION_MESSAGE;
  return error.message;
}

/** Drops a created upload on the server (its staging file); failing that, the server sweeps it later. */
async function cancelOnServer(uploadPath: string): Promise<void> {
  try {
    await request(uploadPath, { method: 'DELETE', headers: { 'Tus-Resumable': TUS_VERSION } });
  } catch {
    // Nothing to undo on this side.
  }
}

/**
 * The server's tus endpoint takes the target path as the upload URL (contract 13). The client
 * creates the upload there itself (POST with Upload-Length; 409 when the name is taken and
 * `override` is off), then hands that URL to tus-js-client, which asks for the offset (HEAD) and
 * sends the file in PATCH chunks, resuming from the server's offset after a failure. The file is
 * sliced, never read into memory, so the tab's memory does not grow with the file size.
 */
export function tusUpload(path: string, file: Blob, options: UploadFileOptions): UploadHandle {
  const uploadPath = `/api/tus${encodePath(path)}`;
  const controller = new AbortController();
  let upload: tus.Upload | null = null;
  // tus-js-client goes quiet once aborted: the abort settles the promise itself.
  let stop: (() => void) | null = null;
  let created = false;
  let aborted = false;

  const done = (async () => {
    const settings = options.tusSettings;
    if (!settings) throw new Error(TUS_SETTINGS_MISSING);
    try {
      await request(`${uploadPath}?override=${options.override}`, {
        method: 'POST',
        headers: { 'Tus-Resumable': TUS_VERSION, 'Upload-Length': String(file.size) },
        signal: controller.signal,
      });
    } catch (error) {
      if (aborted) throw abortError();
      if (error instanceof ApiError) {
        throw new ApiError(error.status, `Failed to create an upload: ${error.message}`);
      }
      throw error;
    }
    created = true;
    if (aborted) {
      await cancelOnServer(uploadPath);
      throw abortError();
    }
    // The server completes an empty file at creation.
    if (file.size === 0) return;

    await new Promise<void>((resolve, reject) => {
      stop = () => reject(abortError());
      const current = new tus.Upload(file, {
        uploadUrl: new URL(apiURL(uploadPath), window.location.href).href,
        chunkSize: settings.chunkSize > 0 ? settings.chunkSize : Number.POSITIVE_INFINITY,
        retryDelays: retryDelays(settings.retryCount),
        parallelUploads: 1,
        // The upload URL is the target path: nothing to remember for resuming across page loads.
        storeFingerprintForResuming: false,
        removeFingerprintOnSuccess: true,
        onBeforeRequest: async (req) => {
          const token = await uploadSessionToken();
          if (token) req.setHeader(AUTH_HEADER, token);
        },
        onAfterResponse: (req, res) => {
          noteUploadResponse(
            res.getStatus(),
            res.getHeader(RENEW_HEADER),
            req.getHeader(AUTH_HEADER) ?? null,
          );
        },
        onShouldRetry: (error) => {
          const status = error.originalResponse?.getStatus() ?? 0;
          // A conflict will not go away by asking again.
          if (status === 409) return false;
          // The token was renewed while the request was on its way: go again with the new one.
          if (status === 401) return sessionTokenChanged(error.originalRequest?.getHeader(AUTH_HEADER));
          return status === 0 || status === 423 || status >= 500;
        },
        onProgress: (bytesSent) => options.onProgress(bytesSent),
        onSuccess: () => resolve(),
        onError: (error) => reject(new Error(`Upload failed: ${tusFailure(error)}`)),
      });
      upload = current;
      current.start();
    });
  })();

  return {
    done,
    abort: () => {
      if (aborted) return;
      aborted = true;
      controller.abort();
      if (upload) {
        void upload.abort(true).catch(() => undefined);
        stop?.();
      } else if (created) void cancelOnServer(uploadPath);
    },
  };
}
