/**
 * Splits a text stream into lines as its chunks arrive. A chunk may end in the middle of a line:
 * that part waits for the next chunk. Blank lines (the server's keep-alive) are dropped.
 */
export class LineSplitter {
  private rest = '';

  /** The complete, non-blank lines this chunk finishes. */
  push(chunk: string): string[] {
    const text = this.rest + chunk;
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    return lines.map(stripCarriageReturn).filter((line) => line.trim() !== '');
  }

  /** What is left when the stream ends (a last line without a newline). */
  end(): string[] {
    const last = stripCarriageReturn(this.rest);
    this.rest = '';
    return last.trim() === '' ? [] : [last];
  }
}

function stripCarriageReturn(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/**
 * Reads a byte stream of JSON lines, yielding the values each chunk completes, one batch per
 * chunk, so that a caller can draw results as they come without a render per line. A line that
 * is not JSON goes to `onInvalid`, which may throw to stop the reading.
 */
export async function* readJsonLines<T>(
  stream: ReadableStream<Uint8Array>,
  onInvalid: (line: string) => void = () => undefined,
): AsyncGenerator<T[]> {
  const reader = stream.getReader();
  // stream mode keeps a multi-byte character that straddles two chunks whole.
  const decoder = new TextDecoder();
  const splitter = new LineSplitter();
  const parse = (lines: string[]): T[] => {
    const values: T[] = [];
    for (const line of lines) {
      try {
        values.push(JSON.parse(line) as T);
      } catch {
        onInvalid(line);
      }
    }
    return values;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const batch = parse(splitter.push(decoder.decode(value, { stream: true })));
      if (batch.length > 0) yield batch;
    }
    const last = parse([...splitter.push(decoder.decode()), ...splitter.end()]);
    if (last.length > 0) yield last;
  } finally {
    // Leaving early (an abort, an invalid line, a consumer that stops) must not leave the body open.
    await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
