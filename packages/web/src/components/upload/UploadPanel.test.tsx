import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useLayoutStore } from '../../stores/layout';
import { configureUploads, useUploadStore, type UploadTask } from '../../stores/upload';
import { renderWithApp } from '../../test/render';
import { PromptHost } from '../prompts/PromptHost';
import { UploadPanel } from './UploadPanel';

const MiB = 1024 * 1024;
const task = (id: number, name: string, size: number, isDir = false): UploadTask => ({
  id,
  path: `/docs/${name}`,
  name,
  size,
  isDir,
  override: false,
});

describe('UploadPanel', () => {
  const settled = vi.fn();
  beforeEach(() => {
    configureUploads({ onSettled: settled });
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    useUploadStore.setState({ tasks: {}, queue: [], active: [], loaded: {}, totalBytes: 0, loadedBytes: 0 });
    configureUploads();
    settled.mockReset();
  });

  it('draws nothing when nothing uploads', async () => {
    const { container } = await renderWithApp(<UploadPanel />);
    expect(container.innerHTML).toBe('');
  });

  it('shows the count, percentage, bytes, speed, time left and a bar per file being sent', async () => {
    useUploadStore.setState({
      tasks: { 1: task(1, 'a.bin', 2 * MiB), 2: task(2, 'photos/b.jpg', MiB), 3: task(3, 'c.txt', MiB) },
      active: [1, 2],
      queue: [3],
      loaded: { 1: MiB, 2: 0 },
      totalBytes: 4 * MiB,
      loadedBytes: MiB,
      speed: 1.5,
      eta: 3725,
    });
    await renderWithApp(<UploadPanel />);
    const panel = screen.getByRole('region', { name: 'Uploads' });
    expect(screen.getByRole('heading', { name: 'Uploading 3 files' })).toBeTruthy();
    expect(panel.textContent).toContain('25%');
    expect(panel.textContent).toContain('1 MiB of 4 MiB');
    expect(panel.textContent).toContain('1.50 MB/s');
    expect(panel.textContent).toContain('01:02:05');
    expect(screen.getByRole<HTMLProgressElement>('progressbar', { name: 'a.bin' }).value).toBe(50);
    expect(screen.getByRole<HTMLProgressElement>('progressbar', { name: 'photos/b.jpg' }).value).toBe(0);
    expect(screen.queryByRole('progressbar', { name: 'c.txt' })).toBeNull();
    expect(screen.getByRole('progressbar', { name: 'Upload progress' }).getAttribute('aria-valuenow')).toBe(
      '25',
    );
  });

  it('shows --:--:-- while the time left is unknown', async () => {
    useUploadStore.setState({ tasks: { 1: task(1, 'a', 10) }, active: [1], totalBytes: 10, eta: null });
    await renderWithApp(<UploadPanel />);
    expect(screen.getByRole('region', { name: 'Uploads' }).textContent).toContain('--:--:--');
    expect(screen.getByRole('heading', { name: 'Uploading 1 file' })).toBeTruthy();
  });

  it('collapses to its summary and opens again', async () => {
    useUploadStore.setState({ tasks: { 1: task(1, 'a.bin', 10) }, active: [1], totalBytes: 10 });
    await renderWithApp(<UploadPanel />);
    fireEvent.click(screen.getByRole('button', { name: 'Hide the files' }));
    expect(screen.queryByRole('progressbar', { name: 'a.bin' })).toBeNull();
    const expand = screen.getByRole('button', { name: 'Show the files' });
    expect(expand.getAttribute('aria-expanded')).toBe('false');
    fireEvent.click(expand);
    expect(screen.getByRole('progressbar', { name: 'a.bin' })).toBeTruthy();
  });

  it('aborts only after the confirmation, then resets and reloads', async () => {
    useUploadStore.setState({ tasks: { 1: task(1, 'a.bin', 10) }, active: [1], totalBytes: 10 });
    await renderWithApp(
      <>
        <UploadPanel />
        <PromptHost />
      </>,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Abort the upload' }));
    const dialog = screen.getByRole('dialog', { name: 'Abort upload' });
    expect(dialog.textContent).toContain('Are you sure you wish to abort the upload?');
    fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByRole('region', { name: 'Uploads' })).toBeTruthy();
    expect(settled).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole('button', { name: 'Abort the upload' }));
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Abort' }));
    });
    expect(screen.queryByRole('region', { name: 'Uploads' })).toBeNull();
    expect(settled).toHaveBeenCalledTimes(1);
  });
});
