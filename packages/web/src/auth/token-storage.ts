import { AUTH_COOKIE, TOKEN_STORAGE_KEY } from '@filebrowser/contract';
import { startup } from '../startup';

function cookieAttributes(): string {
  const secure = window.location.protocol === 'https:' ? '; Secure' : '';
  return `Path=${startup.BaseURL || '/'}; SameSite=Strict${secure}`;
}

export function readStoredToken(): string | null {
  try {
    return window.localStorage.getItem(TOKEN_STORAGE_KEY);
  } catch {
    return null;
  }
}

/**
 * Keeps the token where both transports find it: local storage for the X-Auth header, and a
 * cookie for the GET requests a browser makes by itself (downloads, images, websockets).
 */
export function storeToken(jwt: string): void {
  try {
    window.localStorage.setItem(TOKEN_STORAGE_KEY, jwt);
  } catch {
    // Private modes may refuse storage; the in-memory token still works for this tab.
  }
  document.cookie = `${AUTH_COOKIE}=${jwt}; ${cookieAttributes()}`;
}

export function clearStoredToken(): void {
  try {
    window.localStorage.removeItem(TOKEN_STORAGE_KEY);
  } catch {
    // Nothing stored, nothing to clear.
  }
  document.cookie = `${AUTH_COOKIE}=; Max-Age=0; ${cookieAttributes()}`;
}
