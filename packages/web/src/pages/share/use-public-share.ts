import type { FileInfo } from '@filebrowser/contract';
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, errorStatus, errorText } from '../../api/client';
import { fetchPublicShare } from '../../api/shares';

export type PublicShareState =
  | { status: 'loading' }
  | { status: 'ready'; info: FileInfo; token?: string }
  /**
   * The link wants its password. `wrong` after an attempt with a password; `retryAfter` when the
   * server refuses more guesses for now.
   */
  | { status: 'password'; wrong: boolean; tooMany: boolean; retryAfter?: number }
  | { status: 'error'; code: number; message: string };

interface Credentials {
  hash: string;
  password?: string;
  token?: string;
}

/**
 * Loads a path of a public share. The password is sent once; the short-lived token it earns is
 * used for every following request (and download links) until it expires, when the password
 * card shows again.
 */
export function usePublicShare(
  hash: string,
  path: string,
): { state: PublicShareState; submitPassword: (password: string) => void } {
  const [state, setState] = useState<PublicShareState>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);
  const credentials = useRef<Credentials>({ hash });
  if (credentials.current.hash !== hash) credentials.current = { hash };

  useEffect(() => {
    let active = true;
    const controller = new AbortController();
    const creds = credentials.current;
    setState((current) => (current.status === 'password' ? current : { status: 'loading' }));
    fetchPublicShare(hash, path, { password: creds.password, token: creds.token }, controller.signal).then(
      (info) => {
        if (!active) return;
        // The password is not kept once it earned a token.
        creds.password = undefined;
        if (info.token) creds.token = info.token;
        setState({ status: 'ready', info, ...(creds.token && { token: creds.token }) });
      },
      (error: unknown) => {
        if (!active) return;
        const status = errorStatus(error);
        if (status === 401 || status === 429) {
          const triedPassword = !!creds.password;
          creds.password = undefined;
          creds.token = undefined;
          const retryAfter = error instanceof ApiError ? error.retryAfter : undefined;
          setState({
            status: 'password',
            wrong: status === 401 && triedPassword,
            tooMany: status === 429,
            ...(retryAfter !== undefined && { retryAfter }),
          });
          return;
        }
        setState({ status: 'error', code: status, message: errorText(error) });
      },
    );
    return () => {
      active = false;
      controller.abort();
    };
  }, [hash, path, attempt]);

  const submitPassword = useCallback((password: string) => {
    credentials.current.password = password;
    credentials.current.token = undefined;
    setAttempt((n) => n + 1);
  }, []);

  return { state, submitPassword };
}
