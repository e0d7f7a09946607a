import type { TokenUser } from '@filebrowser/contract';
import { create } from 'zustand';
import * as authApi from '../api/auth';
import { ApiError, connectSession } from '../api/client';
import { isExpired, tryDecodeToken } from '../auth/token';
import { clearStoredToken, readStoredToken, storeToken } from '../auth/token-storage';
import { currentRoute } from '../routing/navigation';
import { startup } from '../startup';

/** Why the session ends: the user asked, or the server or the clock ended it. */
export type LogoutReason = 'user' | 'expired';

export interface Credentials {
  username: string;
  password: string;
  recaptcha?: string;
}

interface AuthState {
  user: TokenUser | null;
  jwt: string | null;
  /** Session expiry in Unix seconds (0 when signed out). */
  expiresAt: number;
  setToken: (jwt: string) => void;
  login: (credentials: Credentials) => Promise<void>;
  signup: (credentials: Credentials) => Promise<void>;
  renew: () => Promise<void>;
  logout: (reason?: LogoutReason) => void;
  /** Validates a stored session, or signs in without credentials for proxy and no-auth setups. */
  initialize: () => Promise<void>;
}

// setTimeout stores its delay in a signed 32-bit integer; longer delays would fire at once.
const MAX_TIMER_DELAY = 2 ** 31 - 1;

let expiryTimer: ReturnType<typeof setTimeout> | undefined;
let pendingRenew: Promise<void> | null = null;
const noop = (): void => undefined;

function clearExpiryTimer(): void {
  if (expiryTimer !== undefined) clearTimeout(expiryTimer);
  expiryTimer = undefined;
}

export const useAuthStore = create<AuthState>()((set, get) => ({
  user: null,
  jwt: null,
  expiresAt: 0,

  setToken: (jwt) => {
    const claims = tryDecodeToken(jwt);
    if (!claims) throw new Error('The server answered with an unreadable session token.');
    storeToken(jwt);
    set({ jwt, user: claims.user, expiresAt: claims.exp });
    clearExpiryTimer();
    const delay = Math.min(Math.max(claims.exp * 1000 - Date.now(), 0), MAX_TIMER_DELAY);
    expiryTimer = setTimeout(() => {
      if (get().jwt === jwt) get().logout('expired');
    }, delay);
  },

  login: async ({ username, password, recaptcha = '' }) => {
    const jwt = await authApi.login({ username, password, recaptcha });
    get().setToken(jwt);
  },

  signup: async ({ username, password, recaptcha }) => {
    await authApi.signup({ username, password, ...(recaptcha ? { recaptcha } : {}) });
    await get().login({ username, password, recaptcha });
  },

  renew: () => {
    const current = get().jwt;
    if (!current) return Promise.reject(new Error('User is not set!'));
    // Several responses may ask for renewal at once; the old token stops working after the first.
    pendingRenew ??= authApi
      .renew(current)
      .then(
        (jwt) => get().setToken(jwt),
        (error: unknown) => {
          if (error instanceof ApiError && error.status === 401 && get().jwt === current)
            get().logout('expired');
          throw error;
        },
      )
      .finally(() => {
        pendingRenew = null;
      });
    return pendingRenew;
  },

  logout: (reason = 'user') => {
    const { jwt } = get();
    clearExpiryTimer();
    clearStoredToken();
    set({ jwt: null, user: null, expiresAt: 0 });
    if (jwt && reason === 'user') void authApi.logout(jwt).catch(() => undefined);

    if (startup.NoAuth) {
      window.location.reload();
      return;
    }
    if (startup.LogoutPage && startup.LogoutPage !== '/login') {
      window.location.assign(startup.LogoutPage);
      return;
    }
    const here = currentRoute(startup.BaseURL);
    if (here.startsWith('/login')) return;
    // An ended session brings the user back where they were after signing in again.
    const target = reason === 'expired' ? `/login?redirect=${encodeURIComponent(here)}` : '/login';
    // A full load (replacing the current entry) drops every piece of in-memory state of the
    // session, so neither Back nor a cached component can show what the user saw.
    window.location.replace(`${startup.BaseURL}${target}`);
  },

  initialize: async () => {
    if (!startup.LoginPage) {
      const jwt = await authApi.login({ username: '', password: '', recaptcha: '' });
      get().setToken(jwt);
      return;
    }
    const stored = readStoredToken();
    if (!stored) return;
    const claims = tryDecodeToken(stored);
    if (!claims || isExpired(claims)) {
      clearStoredToken();
      return;
    }
    try {
      get().setToken(await authApi.renew(stored));
    } catch {
      // A revoked or unknown session simply means signing in again.
      clearStoredToken();
    }
  },
}));

connectSession({
  token: () => useAuthStore.getState().jwt,
  settled: () => (pendingRenew ? pendingRenew.then(noop, noop) : Promise.resolve()),
  onRenewRequested: () => {
    void useAuthStore
      .getState()
      .renew()
      .catch(() => undefined);
  },
  onUnauthorized: () => {
    if (useAuthStore.getState().jwt) useAuthStore.getState().logout('expired');
  },
});

/** Whether the sidebar may offer to sign out: not with no-auth, nor with a proxy that has no logout page. */
export function canLogout(): boolean {
  return !startup.NoAuth && (startup.LoginPage || startup.LogoutPage !== '/login');
}
