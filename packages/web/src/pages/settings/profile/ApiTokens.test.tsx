import type { ApiToken, NewApiToken } from '@filebrowser/contract';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PromptHost } from '../../../components/prompts/PromptHost';
import { useAuthStore } from '../../../stores/auth';
import { useLayoutStore } from '../../../stores/layout';
import { useToastStore } from '../../../stores/toasts';
import { fakeToken, tokenUser } from '../../../test/fixtures';
import { renderWithApp } from '../../../test/render';
import { ApiTokensCard, UserApiTokensCard } from './ApiTokens';

const NOW = Math.floor(Date.now() / 1000);

function token(overrides: Partial<ApiToken> = {}): ApiToken {
  return {
    id: '0123456789abcdef',
    userID: 2,
    name: 'backup job',
    created: NOW - 3600,
    lastUsed: 0,
    expires: 0,
    readOnly: true,
    folder: '',
    folderMissing: false,
    ...overrides,
  };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

describe('API tokens', () => {
  const fetchMock = vi.fn<typeof fetch>();
  const alice = tokenUser({ download: true });

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    useAuthStore.setState({ user: alice, jwt: fakeToken(alice) });
    useToastStore.setState({ toasts: [] });
    useLayoutStore.setState({ prompts: [] });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    fetchMock.mockReset();
  });

  it('lists the user’s tokens with when they were made and used, their expiry and scope', async () => {
    fetchMock.mockResolvedValue(
      json([
        token(),
        token({
          id: 'fedcba9876543210',
          name: 'phone',
          readOnly: false,
          folder: '/photos',
          lastUsed: NOW - 60,
          expires: NOW + 86_400 * 30,
        }),
        token({
          id: 'aaaaaaaaaaaaaaaa',
          name: 'old',
          expires: NOW - 10,
          folder: '/gone',
          folderMissing: true,
        }),
      ]),
    );
    await renderWithApp(<ApiTokensCard />);
    const rows = await screen.findAllByRole('row');
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/tokens');
    const cells = (i: number) =>
      within(rows[i]!)
        .getAllByRole('cell')
        .map((c) => c.textContent);
    expect(cells(1)[0]).toBe('backup job');
    expect(cells(1)[2]).toBe('Never');
    expect(cells(1)[3]).toBe('Never');
    expect(cells(1)[4]).toBe('Read only');
    expect(cells(2)[4]).toBe('Read and write · /photos');
    expect(cells(2)[3]).not.toBe('Never');
    expect(cells(3)[3]).toBe('Expired');
    expect(cells(3)[4]).toBe('Read only · /gone (no longer found)');
  });

  it('creates a token and shows its secret once, with a warning and a copy button', async () => {
    const writeText = vi.fn().mockResolvedValue(undefined);
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    const made: NewApiToken = {
      ...token({
        id: '1111222233334444',
        name: 'sync',
        readOnly: false,
        folder: '/docs',
        expires: NOW + 7 * 86_400,
      }),
      secret: `fbt_1111222233334444_${'s'.repeat(43)}`,
    };
    fetchMock.mockImplementation(async (url, init) =>
      url === '/api/tokens' && init?.method === 'POST' ? json(made, 201) : json([]),
    );
    await renderWithApp(<ApiTokensCard />);
    await screen.findByText('No API tokens yet.');
    const create = screen.getByRole<HTMLButtonElement>('button', { name: 'Create token' });
    expect(create.disabled).toBe(true);

    fireEvent.change(screen.getByLabelText('Name'), { target: { value: '  sync ' } });
    fireEvent.change(screen.getByLabelText('Expires'), { target: { value: '7' } });
    fireEvent.change(screen.getByLabelText('Access'), { target: { value: 'write' } });
    fireEvent.change(screen.getByLabelText('Limit to one folder (optional)'), { target: { value: '/docs' } });
    expect(create.disabled).toBe(true);
    fireEvent.change(screen.getByLabelText('Your current password'), { target: { value: 'my password' } });
    await act(async () => {
      fireEvent.click(create);
    });

    const post = fetchMock.mock.calls.find(([, init]) => init?.method === 'POST')!;
    expect(JSON.parse(post[1]!.body as string)).toEqual({
      name: 'sync',
      expiresInDays: 7,
      readOnly: false,
      folder: '/docs',
      current_password: 'my password',
    });
    const secret = await screen.findByDisplayValue(made.secret);
    expect(secret).toBeTruthy();
    expect(screen.getByText('Copy it now: it will not be shown again.')).toBeTruthy();
    // The list gains the token, without its secret.
    const row = screen.getAllByRole('row')[1]!;
    expect(row.textContent).toContain('sync');
    expect(row.textContent).not.toContain(made.secret);
    // The form is cleared for the next one.
    expect(screen.getByLabelText<HTMLInputElement>('Your current password').value).toBe('');

    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Copy token' }));
    });
    expect(writeText).toHaveBeenCalledWith(made.secret);
    expect(useToastStore.getState().toasts.map((t) => t.message)).toContain('Token copied!');

    fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByDisplayValue(made.secret)).toBeNull();
    expect(document.body.textContent).not.toContain(made.secret);
  });

  it('shows the server’s refusal and keeps the form', async () => {
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'POST'
        ? new Response('400 Bad Request (the current password is incorrect)\n', { status: 400 })
        : json([]),
    );
    await renderWithApp(<ApiTokensCard />);
    await screen.findByText('No API tokens yet.');
    fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'x' } });
    fireEvent.change(screen.getByLabelText('Your current password'), { target: { value: 'wrong' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    });
    await vi.waitFor(() =>
      expect(
        useToastStore
          .getState()
          .toasts.map((t) => t.message)
          .join(),
      ).toContain('current password'),
    );
    expect(screen.getByLabelText<HTMLInputElement>('Name').value).toBe('x');
    expect(screen.queryByText('Copy it now: it will not be shown again.')).toBeNull();
  });

  it('revokes a token after a confirmation', async () => {
    fetchMock.mockImplementation(async (_url, init) =>
      init?.method === 'DELETE' ? new Response('200 OK\n') : json([token()]),
    );
    await renderWithApp(
      <>
        <ApiTokensCard />
        <PromptHost />
      </>,
    );
    fireEvent.click(await screen.findByRole('button', { name: 'Revoke the token backup job' }));
    const dialog = screen.getByRole('dialog', { name: 'Revoke token' });
    expect(dialog.textContent).toContain('Everything using the token backup job stops working at once.');
    expect(fetchMock.mock.calls.some(([, init]) => init?.method === 'DELETE')).toBe(false);
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: 'Revoke' }));
    });
    const del = fetchMock.mock.calls.find(([, init]) => init?.method === 'DELETE')!;
    expect(del[0]).toBe('/api/tokens/0123456789abcdef');
    await screen.findByText('No API tokens yet.');
  });

  it('shows an administrator another user’s tokens to revoke, with no form to make them', async () => {
    fetchMock.mockResolvedValue(json([token({ userID: 5, name: 'their script' })]));
    await renderWithApp(<UserApiTokensCard userId={5} />);
    expect(await screen.findByText('their script')).toBeTruthy();
    expect(fetchMock.mock.calls[0]![0]).toBe('/api/users/5/tokens');
    expect(screen.queryByRole('button', { name: 'Create token' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Revoke the token their script' })).toBeTruthy();
  });
});
