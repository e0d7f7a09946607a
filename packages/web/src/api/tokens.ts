import type { ApiToken, ApiTokenRequest, NewApiToken } from '@filebrowser/contract';
import { request, requestJson } from './client';

/** The signed-in user's personal API tokens. */
export function listTokens(): Promise<ApiToken[]> {
  return requestJson<ApiToken[]>('/api/tokens');
}

/** Any user's tokens, for administrators. */
export function listUserTokens(userId: number): Promise<ApiToken[]> {
  return requestJson<ApiToken[]>(`/api/users/${userId}/tokens`);
}

/** Makes a token; the answer carries its secret, which is never shown again. */
export function createToken(wanted: ApiTokenRequest): Promise<NewApiToken> {
  return requestJson<NewApiToken>('/api/tokens', { method: 'POST', json: wanted });
}

export async function revokeToken(id: string): Promise<void> {
  await request(`/api/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' });
}
