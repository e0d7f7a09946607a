import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useLayoutStore } from '../../stores/layout';
import { renderWithApp } from '../../test/render';
import { PromptHost } from './PromptHost';

describe('PromptHost', () => {
  beforeEach(() => useLayoutStore.setState({ prompts: [] }));
  afterEach(cleanup);

  it('renders nothing without prompts', async () => {
    const { container } = await renderWithApp(<PromptHost />);
    expect(container.innerHTML).toBe('');
  });

  it('shows the oldest prompt as a dialog and Escape closes it, revealing the next', async () => {
    const onClose = vi.fn();
    await renderWithApp(<PromptHost />);
    act(() => {
      useLayoutStore.getState().openPrompt('help', {}, onClose);
      useLayoutStore.getState().openPrompt('newDir', { base: '/' });
    });
    expect(screen.getByRole('dialog', { name: 'Help' })).toBeTruthy();

    fireEvent.keyDown(window, { key: 'Escape' });
    expect(onClose).toHaveBeenCalledTimes(1);
    expect(screen.getByRole('dialog', { name: 'New folder' })).toBeTruthy();
    expect(screen.getByLabelText('Write the name of the new folder.')).toBeTruthy();

    fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('asks for the current password before confirming when told to', async () => {
    const onConfirm = vi.fn().mockResolvedValue(undefined);
    await renderWithApp(<PromptHost />);
    act(() => {
      useLayoutStore.getState().openPrompt('confirm', {
        title: 'Delete user',
        message: 'Sure?',
        confirmLabel: 'Delete',
        askCurrentPassword: true,
        onConfirm,
      });
    });
    const confirm = screen.getByRole<HTMLButtonElement>('button', { name: 'Delete' });
    expect(confirm.disabled).toBe(true);
    fireEvent.change(screen.getByLabelText('Your current password'), { target: { value: 'secret' } });
    expect(confirm.disabled).toBe(false);
    await act(async () => {
      fireEvent.click(confirm);
    });
    expect(onConfirm).toHaveBeenCalledWith('secret');
    expect(screen.queryByRole('dialog')).toBeNull();
  });
});
