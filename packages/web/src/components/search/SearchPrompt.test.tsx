import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../stores/auth';
import { useFilesStore } from '../../stores/files';
import { useLayoutStore } from '../../stores/layout';
import { tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { PromptHost } from '../prompts/PromptHost';

/** A search answer whose chunks the test sends when it wants. */
function controlledBody() {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
  });
  return {
    response: new Response(stream, { status: 200 }),
    send: (text: string) => controller.enqueue(encoder.encode(text)),
    end: () => controller.close(),
  };
}

const hitLines = (count: number, prefix = 'file') =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ dir: false, path: `${prefix}-${i}.jpg` })).join(
    '\n',
  ) + '\n';

async function flush() {
  await act(async () => {
    await new Promise((resolve) => setTimeout(resolve, 0));
  });
}

describe('SearchPrompt', () => {
  const fetchMock = vi.fn<typeof fetch>();

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: tokenUser(), jwt: 'a.b.c' });
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  async function openSearch(dir = '/photos/') {
    await renderWithApp(<PromptHost />);
    act(() => {
      useLayoutStore.getState().openPrompt('search', { dir });
    });
    return screen.getByRole('searchbox', { name: 'Search' });
  }

  it('runs on Enter with the X-Auth header and shows hits as they stream in', async () => {
    const body = controlledBody();
    fetchMock.mockResolvedValue(body.response);
    const input = await openSearch();
    fireEvent.change(input, { target: { value: 'sun set' } });
    fireEvent.submit(input);
    await flush();

    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/search/photos/?query=sun%20set');
    expect(new Headers(init?.headers).get('X-Auth')).toBe('a.b.c');
    expect(screen.getByText('Searching…')).toBeTruthy();

    // A keep-alive line, then a hit cut in two.
    body.send('\n{"dir":true,"path":"2024/sun"}\n{"dir":false,"pa');
    await flush();
    const first = screen.getByRole('link', { name: /2024\/sun/ });
    expect(first.getAttribute('href')).toBe('/files/photos/2024/sun/');
    expect(within(first).getByText('folder')).toBeTruthy();

    body.send('th":"2024/sun set #1.jpg"}\n');
    body.end();
    await flush();
    const second = screen.getByRole('link', { name: /sun set #1\.jpg/ });
    expect(second.getAttribute('href')).toBe('/files/photos/2024/sun%20set%20%231.jpg');
    expect(within(second).getByText('insert_drive_file')).toBeTruthy();
    expect(screen.getByText('2 results')).toBeTruthy();
  });

  it('does nothing for blank text', async () => {
    const input = await openSearch();
    fireEvent.change(input, { target: { value: '   ' } });
    fireEvent.submit(input);
    await flush();
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('puts a type filter in front of the text from the chips', async () => {
    const input = await openSearch();
    fireEvent.change(input, { target: { value: 'beach' } });
    fireEvent.click(screen.getByRole('button', { name: /Images/ }));
    expect((input as HTMLInputElement).value).toBe('type:image beach');
    fireEvent.click(screen.getByRole('button', { name: /PDF/ }));
    expect((input as HTMLInputElement).value).toBe('type:pdf type:image beach');
    fireEvent.click(screen.getByRole('button', { name: /Music/ }));
    expect((input as HTMLInputElement).value).toBe('type:audio type:pdf type:image beach');
  });

  it('clears the results and stops the search when the text changes', async () => {
    const body = controlledBody();
    fetchMock.mockResolvedValue(body.response);
    const input = await openSearch();
    fireEvent.change(input, { target: { value: 'a' } });
    fireEvent.submit(input);
    await flush();
    body.send(hitLines(3));
    await flush();
    expect(screen.getAllByRole('link')).toHaveLength(3);

    fireEvent.change(input, { target: { value: 'ab' } });
    expect(screen.queryAllByRole('link')).toHaveLength(0);
    expect(fetchMock.mock.calls[0]![1]?.signal?.aborted).toBe(true);
    expect(screen.getByText('Press Enter to search.')).toBeTruthy();
  });

  it('shows 50 hits, and 50 more when scrolled near the end', async () => {
    // happy-dom lays nothing out: give the list a box of 400 px and rows of 40 px.
    const proto = HTMLElement.prototype;
    const spies = [
      vi.spyOn(proto, 'clientHeight', 'get').mockReturnValue(400),
      vi.spyOn(proto, 'scrollHeight', 'get').mockImplementation(function (this: HTMLElement) {
        return this.children.length * 40;
      }),
    ];
    try {
      const body = controlledBody();
      fetchMock.mockResolvedValue(body.response);
      const input = await openSearch();
      fireEvent.change(input, { target: { value: 'file' } });
      fireEvent.submit(input);
      await flush();
      body.send(hitLines(120));
      body.end();
      await flush();
      const list = screen.getByRole('list', { name: 'Search results' });
      expect(within(list).getAllByRole('link')).toHaveLength(50);
      expect(screen.getByText('120 results')).toBeTruthy();

      // 50 rows are 2000 px: 1400 + 400 is 200 px from the end, not near enough.
      list.scrollTop = 1400;
      fireEvent.scroll(list);
      expect(within(list).getAllByRole('link')).toHaveLength(50);

      list.scrollTop = 1550;
      fireEvent.scroll(list);
      expect(within(list).getAllByRole('link')).toHaveLength(100);

      list.scrollTop = 3600;
      fireEvent.scroll(list);
      expect(within(list).getAllByRole('link')).toHaveLength(120);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('reports a failure that arrives inside the stream', async () => {
    const body = controlledBody();
    fetchMock.mockResolvedValue(body.response);
    const input = await openSearch();
    fireEvent.change(input, { target: { value: 'x' } });
    fireEvent.submit(input);
    await flush();
    body.send('{"dir":false,"path":"x1"}\n500 Internal Server Error\n');
    body.end();
    await flush();
    expect(screen.getByRole('alert').textContent).toBe('500 Internal Server Error');
  });

  it('reports a refused search', async () => {
    fetchMock.mockResolvedValue(new Response('404 Not Found\n', { status: 404 }));
    const input = await openSearch('/gone/');
    fireEvent.change(input, { target: { value: 'x' } });
    fireEvent.submit(input);
    await flush();
    expect(screen.getByRole('alert').textContent).toBe('404 Not Found');
  });

  it('aborts the search and reloads the listing on close once a search ran', async () => {
    const body = controlledBody();
    fetchMock.mockResolvedValue(body.response);
    const input = await openSearch();
    const before = useFilesStore.getState().listingVersion;
    fireEvent.change(input, { target: { value: 'a' } });
    fireEvent.submit(input);
    await flush();
    body.send(hitLines(1));
    await flush();

    fireEvent.click(screen.getByRole('button', { name: 'Close search' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(fetchMock.mock.calls[0]![1]?.signal?.aborted).toBe(true);
    expect(useFilesStore.getState().listingVersion).toBe(before + 1);
  });

  it('leaves the listing alone when closed without searching', async () => {
    await openSearch();
    const before = useFilesStore.getState().listingVersion;
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(useFilesStore.getState().listingVersion).toBe(before);
  });
});
