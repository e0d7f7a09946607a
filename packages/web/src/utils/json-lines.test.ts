import { describe, expect, it } from 'vitest';
import { LineSplitter, readJsonLines } from './json-lines';

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks)
        controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function collect<T>(source: AsyncGenerator<T[]>): Promise<T[][]> {
  const batches: T[][] = [];
  for await (const batch of source) batches.push(batch);
  return batches;
}

describe('LineSplitter', () => {
  it('holds back a line cut in the middle until its end arrives', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('{"dir":false,"pa')).toEqual([]);
    expect(splitter.push('th":"a.txt"}\n{"dir":true,')).toEqual(['{"dir":false,"path":"a.txt"}']);
    expect(splitter.push('"path":"b"}\n')).toEqual(['{"dir":true,"path":"b"}']);
    expect(splitter.end()).toEqual([]);
  });

  it('drops the blank keep-alive lines, also with carriage returns', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('\n\n{"a":1}\r\n\r\n  \n')).toEqual(['{"a":1}']);
  });

  it('gives the last line without a newline at the end', () => {
    const splitter = new LineSplitter();
    expect(splitter.push('{"a":1}\n{"a":2}')).toEqual(['{"a":1}']);
    expect(splitter.end()).toEqual(['{"a":2}']);
    expect(splitter.end()).toEqual([]);
  });
});

describe('readJsonLines', () => {
  it('yields one batch per chunk with the values that chunk completes', async () => {
    const batches = await collect(
      readJsonLines<{ dir: boolean; path: string }>(
        streamOf([
          '{"dir":true,"path":"photos"}\n{"dir":false,"path":"photos/a.jpg"}\n{"dir":false,',
          '"path":"photos/b.jpg"}\n',
          '\n',
          '{"dir":false,"path":"c.pdf"}',
        ]),
      ),
    );
    expect(batches).toEqual([
      [
        { dir: true, path: 'photos' },
        { dir: false, path: 'photos/a.jpg' },
      ],
      [{ dir: false, path: 'photos/b.jpg' }],
      [{ dir: false, path: 'c.pdf' }],
    ]);
  });

  it('keeps a multi-byte character split across two chunks', async () => {
    const bytes = new TextEncoder().encode('{"dir":false,"path":"été.txt"}\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    const batches = await collect(readJsonLines(streamOf([bytes.slice(0, cut), bytes.slice(cut)])));
    expect(batches).toEqual([[{ dir: false, path: 'été.txt' }]]);
  });

  it('yields nothing for an empty body or one made only of keep-alive lines', async () => {
    expect(await collect(readJsonLines(streamOf([])))).toEqual([]);
    expect(await collect(readJsonLines(streamOf(['\n', '\n'])))).toEqual([]);
  });

  it('reports a line that is not JSON, and stops when told to', async () => {
    const invalid: string[] = [];
    const batches = await collect(
      readJsonLines(streamOf(['{"a":1}\nnot json\n{"a":2}\n']), (line) => invalid.push(line)),
    );
    expect(batches).toEqual([[{ a: 1 }, { a: 2 }]]);
    expect(invalid).toEqual(['not json']);

    const failing = readJsonLines(streamOf(['{"a":1}\n', '500 Internal Server Error\n']), (line) => {
      throw new Error(line);
    });
    await expect(collect(failing)).rejects.toThrow('500 Internal Server Error');
  });
});
