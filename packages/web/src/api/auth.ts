import type { LoginRequest, SignupRequest } from '@filebrowser/contract';
import { AUTH_HEADER } from '@filebrowser/contract';
import { request, requestText } from './client';

/** Resolves with the session token. With proxy or no-auth methods, empty credentials are expected. */
export function login(credentials: LoginRequest): Promise<string> {
  return requestText('/api/login', { method: 'POST', json: credentials, authenticated: false });
}

/**
 * Trades a token for a fresh one; the old one stops working. The token is passed explicitly, so
 * that requests waiting for the renewal do not wait for this one, and a refusal is left to the
 * caller to judge (at start-up it only means signing in again).
 */
export function renew(token: string): Promise<string> {
  return requestText('/api/renew', {
    method: 'POST',
    headers: { [AUTH_HEADER]: token },
    authenticated: false,
  });
}

/** Ends the session on the server. The token is passed explicitly: the client has already forgotten it. */
export async function logout(token: string): Promise<void> {
  await request('/api/logout', {
    method: 'POST',
    headers: { [AUTH_HEADER]: token },
    authenticated: false,
    // The page is about to be replaced by the login screen.
    keepalive: true,
  });
}

export async function signup(body: SignupRequest & { recaptcha?: string }): Promise<void> {
  await request('/api/signup', { method: 'POST', json: body, authenticated: false });
}
