import type { TokenUser } from '@filebrowser/contract';
import { useAuthStore } from '../stores/auth';

/** The signed-in user; only for components rendered behind the sign-in guard. */
export function useUser(): TokenUser {
  const user = useAuthStore((state) => state.user);
  if (!user) throw new Error('User is not set!');
  return user;
}
