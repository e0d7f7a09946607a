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

  it('shows the captcha widget when enabled and insists on it being solved', async () => {
    startup.ReCaptcha = true;
    startup.ReCaptchaKey = 'site-key';
    // Stands for the loaded captcha script (the page adds the real one from the captcha host).
    const marker = document.createElement('meta');
    marker.id = 'recaptcha-script';
    document.head.appendChild(marker);
    let solved = '';
    const grecaptcha = {
      render: vi.fn(() => 7),
      getResponse: vi.fn(() => solved),
      reset: vi.fn(),
    };
    vi.stubGlobal('grecaptcha', grecaptcha);
    try {
      const { container } = await renderWithApp(<LoginPage />);
      await vi.waitFor(() => expect(grecaptcha.render).toHaveBeenCalledTimes(1));
      const [element, options] = grecaptcha.render.mock.calls[0] as unknown as [HTMLElement, object];
      expect(container.contains(element)).toBe(true);
      expect(options).toEqual({ sitekey: 'site-key' });

      fill('Username', 'alice');
      fill('Password', 'right');
      await submit('Login');
      expect(screen.getByRole('alert').textContent).toBe('Wrong credentials');
      expect(fetchMock).not.toHaveBeenCalled();

      solved = 'captcha-token';
      fetchMock.mockResolvedValue(new Response(fakeToken(tokenUser())));
      await submit('Login');
      expect(JSON.parse(fetchMock.mock.calls[0]![1]?.body as string)).toEqual({
        username: 'alice',
        password: 'right',
        recaptcha: 'captcha-token',
      });
    } finally {
      marker.remove();
      startup.ReCaptcha = false;
      delete startup.ReCaptchaKey;
    }
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
