import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startup } from '../../startup';
import { useToastStore } from '../../stores/toasts';
import { renderWithApp } from '../../test/render';
import { ToastHost } from './ToastHost';

describe('ToastHost', () => {
  beforeEach(() => useToastStore.setState({ toasts: [] }));
  afterEach(() => {
    cleanup();
    startup.DisableExternal = false;
  });

  it('shows an error with a report link and a dismiss button', async () => {
    await renderWithApp(<ToastHost />);
    act(() => useToastStore.getState().showError('403 Forbidden'));
    expect(screen.getByRole('alert').textContent).toContain('403 Forbidden');
    const report = screen.getByRole<HTMLAnchorElement>('link', { name: 'Report issue' });
    expect(report.href).toContain('issues/new');
    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('hides the report link when external links are disabled', async () => {
    startup.DisableExternal = true;
    await renderWithApp(<ToastHost />);
    act(() => useToastStore.getState().showError('500 Internal Server Error'));
    expect(screen.queryByRole('link', { name: 'Report issue' })).toBeNull();
  });

  it('never shows more than 10 toasts', async () => {
    await renderWithApp(<ToastHost />);
    act(() => {
      for (let i = 0; i < 15; i++) useToastStore.getState().showSuccess(`Saved ${i}`);
    });
    expect(screen.getAllByRole('status')).toHaveLength(10);
    expect(screen.queryByText('Saved 4')).toBeNull();
    expect(screen.getByText('Saved 14')).toBeTruthy();
  });
});
