import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, connectSession, NO_CONNECTION_MESSAGE, request, requestJson } from './client';

const session = {
  token: vi.fn<() => string | null>(),
  settled: vi.fn(() => Promise.resolve()),
  onRenewRequested: vi.fn(),
  onUnauthorized: vi.fn(),
};

function answer(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(status === 204 ? null : body, { status, headers });
}

describe('api client', () => {
  const fetchMock = vi.fn<typeof fetch>();

  beforeEach(() => {
    vi.stubGlobal('fetch', fetchMock);
    session.token.mockReturnValue('a.b.c');
    connectSession(session);
  });

  afterEach(() => {
    vi.unstubAllGlobals();
    vi.clearAllMocks();
    fetchMock.mockReset();
  });

  it('sends the session token in X-Auth', async () => {
    fetchMock.mockResolvedValue(answer(200, '[]'));
    await requestJson('/api/users');
    const [url, init] = fetchMock.mock.calls[0]!;
    expect(url).toBe('/api/users');
    expect(new Headers(init?.headers).get('X-Auth')).toBe('a.b.c');
  });

  it('leaves the token out of unauthenticated calls', async () => {
    fetchMock.mockResolvedValue(answer(200, 'token'));
    await request('/api/login', { method: 'POST', json: {}, authenticated: false });
    const [, init] = fetchMock.mock.calls[0]!;
    expect(new Headers(init?.headers).has('X-Auth')).toBe(false);
    expect(new Headers(init?.headers).get('Content-Type')).toBe('application/json');
    expect(init?.body).toBe('{}');
  });

  it('rejects with the status and the server text', async () => {
    fetchMock.mockResolvedValue(
      answer(400, '400 Bad Request (password is too short, minimum length is 12)\n'),
    );
    const error = await request('/api/users/1', { method: 'PUT' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      message: '400 Bad Request (password is too short, minimum length is 12)',
    });
  });

  it('falls back to the status line when the body is empty or HTML', async () => {
    fetchMock.mockResolvedValueOnce(new Response('', { status: 404, statusText: 'Not Found' }));
    await expect(request('/api/x')).rejects.toMatchObject({ status: 404, message: '404 Not Found' });
    fetchMock.mockResolvedValueOnce(
      new Response('<!doctype html>', { status: 502, statusText: 'Bad Gateway' }),
    );
    await expect(request('/api/x')).rejects.toMatchObject({ status: 502, message: '502 Bad Gateway' });
  });

  it('reports a network failure as status 0, "000 No connection"', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'));
    await expect(request('/api/users')).rejects.toMatchObject({ status: 0, message: NO_CONNECTION_MESSAGE });
  });

  it('lets an abort through as an abort', async () => {
    fetchMock.mockRejectedValue(new DOMException('aborted', 'AbortError'));
    await expect(request('/api/users')).rejects.toHaveProperty('name', 'AbortError');
  });

  it('signs out on a 401 of an authenticated call only', async () => {
    fetchMock.mockResolvedValue(answer(401, '401 Unauthorized\n'));
    await expect(request('/api/users')).rejects.toMatchObject({ status: 401 });
    expect(session.onUnauthorized).toHaveBeenCalledTimes(1);
    await expect(request('/api/public/share/x', { authenticated: false })).rejects.toMatchObject({
      status: 401,
    });
    expect(session.onUnauthorized).toHaveBeenCalledTimes(1);
  });

  it('asks for a renewal when the server says so', async () => {
    fetchMock.mockResolvedValue(answer(200, '{}', { 'X-Renew-Token': 'true' }));
    await request('/api/settings');
    expect(session.onRenewRequested).toHaveBeenCalledTimes(1);
    fetchMock.mockResolvedValue(answer(200, '{}', { 'X-Renew-Token': 'false' }));
    await request('/api/settings');
    expect(session.onRenewRequested).toHaveBeenCalledTimes(1);
  });

  it('sends a refused request again when a renewal replaced the token meanwhile', async () => {
    session.token.mockReturnValueOnce('old.to.ken').mockReturnValue('new.to.ken');
    fetchMock
      .mockResolvedValueOnce(answer(401, '401 Unauthorized\n'))
      .mockResolvedValueOnce(answer(200, '[]'));
    await requestJson('/api/users');
    expect(fetchMock).toHaveBeenCalledTimes(2);
    expect(new Headers(fetchMock.mock.calls[1]![1]?.headers).get('X-Auth')).toBe('new.to.ken');
    expect(session.onUnauthorized).not.toHaveBeenCalled();
  });

  it('waits for a renewal under way before sending', async () => {
    let finish = () => undefined as void;
    session.settled.mockReturnValueOnce(new Promise<void>((resolve) => (finish = resolve)));
    fetchMock.mockResolvedValue(answer(200, '[]'));
    const pending = requestJson('/api/users');
    await Promise.resolve();
    expect(fetchMock).not.toHaveBeenCalled();
    finish();
    await pending;
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it('reads Retry-After of a 429', async () => {
    fetchMock.mockResolvedValue(answer(429, '429 Too Many Requests\n', { 'Retry-After': '30' }));
    await expect(request('/api/login', { authenticated: false })).rejects.toMatchObject({
      status: 429,
      retryAfter: 30,
    });
  });
});
