import { useCallback, useEffect, useState, type Dispatch, type SetStateAction } from 'react';
import { errorStatus, errorText } from '../api/client';

export type LoadState<T> =
  { status: 'loading' } | { status: 'error'; code: number; message: string } | { status: 'ready'; data: T };

/**
 * Runs a loader when the component mounts (and when `key` changes), for pages that show one
 * server answer and may edit it locally.
 */
export function useLoad<T>(
  loader: () => Promise<T>,
  key: string,
): { state: LoadState<T>; setData: Dispatch<SetStateAction<T>>; reload: () => void } {
  const [state, setState] = useState<LoadState<T>>({ status: 'loading' });
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    let active = true;
    setState({ status: 'loading' });
    loader().then(
      (data) => active && setState({ status: 'ready', data }),
      (error: unknown) =>
        active && setState({ status: 'error', code: errorStatus(error), message: errorText(error) }),
    );
    return () => {
      active = false;
    };
    // The loader is recreated on every render; `key` says when it asks for something else.
  }, [key, attempt]);

  const setData: Dispatch<SetStateAction<T>> = useCallback((update) => {
    setState((current) => {
      if (current.status !== 'ready') return current;
      const data = typeof update === 'function' ? (update as (previous: T) => T)(current.data) : update;
      return { status: 'ready', data };
    });
  }, []);

  const reload = useCallback(() => setAttempt((n) => n + 1), []);
  return { state, setData, reload };
}
