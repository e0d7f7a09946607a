import { useEffect, useRef, useState } from 'react';
import { formatChunkSize, parseChunkSize } from '../../../utils/tus-chunk-size';

/** Typing pauses this long before the chunk size is read and shown back in tidy units. */
export const CHUNK_SIZE_SETTLE_MS = 1500;

/**
 * The tus chunk size as the admin types it ("10MB", "1.5 G"). The value is read 1.5 s after typing
 * stops; `commit()` reads it at once, for a save that comes sooner.
 */
export function useChunkSizeField(initialBytes: number, onBytes: (bytes: number) => void) {
  const [text, setText] = useState(() => formatChunkSize(initialBytes));
  const onBytesRef = useRef(onBytes);
  useEffect(() => {
    onBytesRef.current = onBytes;
  });

  useEffect(() => {
    const timer = setTimeout(() => {
      const bytes = parseChunkSize(text);
      onBytesRef.current(bytes);
      setText(formatChunkSize(bytes));
    }, CHUNK_SIZE_SETTLE_MS);
    return () => clearTimeout(timer);
  }, [text]);

  const commit = (): number => {
    const bytes = parseChunkSize(text);
    setText(formatChunkSize(bytes));
    return bytes;
  };

  return { text, setText, commit };
}
