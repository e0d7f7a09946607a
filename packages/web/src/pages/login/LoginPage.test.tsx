import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startup } from '../../startup';
import { useAuthStore } from '../../stores/auth';
import { fakeToken, tokenUser } from '../../test/fixtures';
import { renderWithApp } from '../../test/render';
import { LoginPage } from './LoginPage';

describe('LoginPage', () => {
  const fetchMock = vi.fn<typeof fetch>();
  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: null, jwt: null });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
    startup.Signup = false;
  });

  const fill = (label: string, value: string) =>
    fireEvent.change(screen.getByLabelText(label, { exact: true }), { target: { value } });
  const submit = async (name: string) => {
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name }));
    });
  };

  it('shows the wrong-credentials message on 403', async () => {
    fetchMock.mockResolvedValue(new Response('403 Forbidden\n', { status: 403 }));
    await renderWithApp(<LoginPage />);
    fill('Username', 'alice');
    fill('Password', 'nope');
    await submit('Login');
    expect(screen.getByRole('alert').textContent).toBe('Wrong credentials');
  });

  it('signs in', async () => {
    fetchMock.mockResolvedValue(new Response(fakeToken(tokenUser())));
    await renderWithApp(<LoginPage />);
    fill('Username', 'alice');
    fill('Password', 'right');
    await submit('Login');
    expect(useAuthStore.getState().user?.username).toBe('alice');
  });

  it('offers signup only when enabled', async () => {
    await renderWithApp(<LoginPage />);
    expect(screen.queryByRole('button', { name: /sign up/i })).toBeNull();
  });

  it('checks the confirmation in signup mode before asking the server', async () => {
    startup.Signup = true;
    await renderWithApp(<LoginPage />);
    fireEvent.click(screen.getByRole('button', { name: "Don't have an account? Sign up" }));
    fill('Username', 'bob');
    fill('Password', 'one long password');
    fill('Password confirmation', 'another long password');
    await submit('Signup');
    expect(screen.getByRole('alert').textContent).toBe("Passwords don't match");
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it('shows the username-taken message on 409', async () => {
    startup.Signup = true;
    fetchMock.mockResolvedValue(new Response('409 Conflict\n', { status: 409 }));
    await renderWithApp(<LoginPage />);
    fireEvent.click(screen.getByRole('button', { name: "Don't have an account? Sign up" }));
    fill('Username', 'bob');
    fill('Password', 'one long password');
    fill('Password confirmation', 'one long password');
    await submit('Signup');
    expect(screen.getByRole('alert').textContent).toBe('Username already taken');
  });

  it('shows other errors as the server words them', async () => {
    startup.Signup = true;
    fetchMock.mockResolvedValue(
      new Response('400 Bad Request (password is too short, minimum length is 12)\n', { status: 400 }),
    );
    await renderWithApp(<LoginPage />);
    fireEvent.click(screen.getByRole('button', { name: "Don't have an account? Sign up" }));
    fill('Username', 'bob');
    fill('Password', 'short');
    fill('Password confirmation', 'short');
    await submit('Signup');
    expect(screen.getByRole('alert').textContent).toBe(
      '400 Bad Request (password is too short, minimum length is 12)',
    );
  });
});
