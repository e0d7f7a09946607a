import { cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { useAuthStore } from '../../../stores/auth';
import { tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { ChangePasswordCard, matchClass } from './ChangePasswordCard';

describe('matchClass', () => {
  it('is green when equal, red when different, neutral while one is empty', () => {
    expect(matchClass('secret', 'secret')).toBe('input--valid');
    expect(matchClass('secret', 'secreT')).toBe('input--invalid');
    expect(matchClass('', 'x')).toBeUndefined();
    expect(matchClass('x', '')).toBeUndefined();
  });
});

describe('ChangePasswordCard', () => {
  const fetchMock = vi.fn<typeof fetch>();
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: tokenUser(), jwt: 'a.b.c' });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('is hidden for password-locked users', async () => {
    useAuthStore.setState({ user: tokenUser({}, { lockPassword: true }) });
    const { container } = await renderWithApp(<ChangePasswordCard />);
    expect(container.innerHTML).toBe('');
  });

  it('sends nothing until both passwords are equal and not empty', async () => {
    await renderWithApp(<ChangePasswordCard />);
    const newPassword = screen.getByLabelText('Your new password');
    const confirmation = screen.getByLabelText('Confirm your new password');
    const submit = screen.getByRole<HTMLButtonElement>('button', { name: 'Update' });

    fireEvent.change(newPassword, { target: { value: 'a long new password' } });
    fireEvent.change(confirmation, { target: { value: 'a long new passwor' } });
    expect(confirmation.className).toContain('input--invalid');
    fireEvent.submit(submit.form!);
    expect(fetchMock).not.toHaveBeenCalled();

    fireEvent.change(confirmation, { target: { value: 'a long new password' } });
    expect(confirmation.className).toContain('input--valid');
    fireEvent.change(screen.getByLabelText('Your current password'), { target: { value: 'old one' } });
    fetchMock.mockResolvedValue(new Response('200 OK\n'));
    fireEvent.submit(submit.form!);
    await vi.waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(1));
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/users/2');
    expect(JSON.parse(init?.body as string)).toEqual({
      what: 'user',
      which: ['password'],
      current_password: 'old one',
      data: { id: 2, password: 'a long new password' },
    });
  });
});
