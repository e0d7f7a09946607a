import type { FileInfo } from '@filebrowser/contract';
import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useResource } from './use-resource';

const item = (path: string, isDir = false): FileInfo => ({
  path,
  name: path.split('/').filter(Boolean).pop() ?? '',
  size: 1,
  extension: '',
  modified: '2025-03-01T10:20:30Z',
  mode: 420,
  isDir,
  isSymlink: false,
  type: isDir ? '' : 'image',
  ...(isDir ? { items: [] } : {}),
});

describe('useResource', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const answers = new Map<string, (value: Response) => void>();

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    fetchMock.mockImplementation(
      (url) => new Promise<Response>((resolve) => answers.set(String(url), resolve)),
    );
  });
  afterEach(() => {
    vi.unstubAllGlobals();
    fetchMock.mockReset();
    answers.clear();
  });

  async function answer(path: string, body: FileInfo) {
    const url = `/api/resources${path}`;
    await vi.waitFor(() => expect(answers.has(url)).toBe(true));
    await act(async () => {
      answers.get(url)?.(new Response(JSON.stringify(body)));
      await new Promise((resolve) => setTimeout(resolve, 0));
    });
  }

  it('keeps the open file on screen while the next file of its folder loads', async () => {
    const { result, rerender } = renderHook(({ path }) => useResource(path), {
      initialProps: { path: '/pics/a.png' },
    });
    expect(result.current.state.status).toBe('loading');
    await answer('/pics/a.png', item('/pics/a.png'));
    expect(result.current.state).toEqual({ status: 'ready', resource: item('/pics/a.png') });

    rerender({ path: '/pics/b.png' });
    expect(result.current).toEqual({
      state: { status: 'ready', resource: item('/pics/a.png') },
      pending: true,
    });
    await answer('/pics/b.png', item('/pics/b.png'));
    expect(result.current).toEqual({
      state: { status: 'ready', resource: item('/pics/b.png') },
      pending: false,
    });
  });

  it('shows the loading state for a file of another folder, and for a folder', async () => {
    const { result, rerender } = renderHook(({ path }) => useResource(path), {
      initialProps: { path: '/pics/a.png' },
    });
    await answer('/pics/a.png', item('/pics/a.png'));
    rerender({ path: '/docs/b.png' });
    expect(result.current.state.status).toBe('loading');
    await answer('/docs/b.png', item('/docs/b.png'));
    expect(result.current.state.status).toBe('ready');
    rerender({ path: '/docs/' });
    expect(result.current.state.status).toBe('loading');
  });
});
