import type { User, UserDeleteRequest, UserRequest } from '@filebrowser/contract';
import { request, requestJson } from './client';

export function listUsers(): Promise<User[]> {
  return requestJson<User[]>('/api/users');
}

export function getUser(id: number): Promise<User> {
  return requestJson<User>(`/api/users/${id}`);
}

/** Creates a user; resolves with the Location the server answers (a UI route such as /settings/users/5). */
export async function createUser(data: User, currentPassword: string): Promise<string | null> {
  const body: UserRequest = { what: 'user', which: [], current_password: currentPassword, data };
  const response = await request('/api/users', { method: 'POST', json: body });
  return response.headers.get('Location');
}

/** Writes the listed fields of a user (`['all']` replaces the whole record, admins only). */
export async function updateUser(
  data: Partial<User> & { id: number },
  which: string[],
  currentPassword?: string,
): Promise<void> {
  const body: UserRequest = { what: 'user', which, data };
  if (currentPassword !== undefined) body.current_password = currentPassword;
  await request(`/api/users/${data.id}`, { method: 'PUT', json: body });
}

export async function deleteUser(id: number, currentPassword: string): Promise<void> {
  const body: UserDeleteRequest = { current_password: currentPassword };
  await request(`/api/users/${id}`, { method: 'DELETE', json: body });
}
