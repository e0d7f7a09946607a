import type * as tus from 'tus-js-client';

/**
 * File Browser 2.63.23's web client, reduced to the requests it sends: the method, URL, headers
 * and body of every call in its `frontend/src/api/*.ts` and `frontend/src/utils/auth.ts`. The
 * bodies are handed to `fetch` as the old client hands them (a string from JSON.stringify, a
 * Blob, nothing), so Node's fetch labels them the way a browser does:
 * `text/plain;charset=UTF-8` for a string, the Blob's own type, no Content-Type without a body.
 * Links the old client opens (`window.open`, `<img src>`) carry the `auth` cookie only.
 */
export class OldClient {
  /** What the old client keeps in its auth store, localStorage and the `auth` cookie. */
  jwt = '';

  constructor(readonly origin: string) {}

  /** Every same-origin request of the page carries the cookie parseToken sets. */
  private cookie(): Record<string, string> {
    return this.jwt ? { Cookie: `auth=${this.jwt}` } : {};
  }

  /** api/utils.ts fetchURL: X-Auth on every call, the caller's headers after it. */
  fetchURL(
    url: string,
    opts: { method?: string; body?: NonNullable<RequestInit['body']>; headers?: Record<string, string> } = {},
  ) {
    const { headers = {}, ...rest } = opts;
    return fetch(this.origin + url, {
      headers: { ...this.cookie(), 'X-Auth': this.jwt, ...headers },
      ...rest,
    });
  }

  /** A link the page opens: the browser sends the cookie, never X-Auth. */
  open(url: string) {
    return fetch(this.origin + url, { headers: this.cookie() });
  }

  // utils/auth.ts

  async login(username: string, password: string, recaptcha = '') {
    const res = await fetch(`${this.origin}/api/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password, recaptcha }),
    });
    if (res.status === 200) this.jwt = await res.clone().text();
    return res;
  }

  async renew() {
    const res = await fetch(`${this.origin}/api/renew`, {
      method: 'POST',
      headers: { ...this.cookie(), 'X-Auth': this.jwt },
    });
    if (res.status === 200) this.jwt = await res.clone().text();
    return res;
  }

  signup(username: string, password: string) {
    return fetch(`${this.origin}/api/signup`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password }),
    });
  }

  /** The `user` claim the old client keeps and spreads into profile updates. */
  tokenUser(): Record<string, unknown> & { id: number } {
    const payload = this.jwt.split('.')[1] ?? '';
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { user: never }).user;
  }

  // api/users.ts

  users = {
    getAll: () => this.fetchURL('/api/users', {}),
    get: (id: number) => this.fetchURL(`/api/users/${id}`, {}),
    create: (user: Record<string, unknown>, currentPassword: string) =>
      this.fetchURL('/api/users', {
        method: 'POST',
        body: JSON.stringify({ what: 'user', which: [], current_password: currentPassword, data: user }),
      }),
    update: (
      user: { id?: number } & Record<string, unknown>,
      which = ['all'],
      currentPassword: string | null = null,
    ) =>
      this.fetchURL(`/api/users/${user.id}`, {
        method: 'PUT',
        body: JSON.stringify({
          what: 'user',
          which,
          ...(currentPassword != null ? { current_password: currentPassword } : {}),
          data: user,
        }),
      }),
    remove: (id: number, currentPassword: string | null = null) =>
      this.fetchURL(`/api/users/${id}`, {
        method: 'DELETE',
        body: JSON.stringify({ ...(currentPassword != null ? { current_password: currentPassword } : {}) }),
      }),
  };

  // api/settings.ts

  settings = {
    get: () => this.fetchURL('/api/settings', {}),
    update: (settings: unknown) =>
      this.fetchURL('/api/settings', { method: 'PUT', body: JSON.stringify(settings) }),
  };

  // api/share.ts (URLs are the page's routes, "/files/…")

  share = {
    list: () => this.fetchURL('/api/shares'),
    get: (url: string) => this.fetchURL(`/api/share${removePrefix(url)}`),
    remove: (hash: string) => this.fetchURL(`/api/share/${hash}`, { method: 'DELETE' }),
    create: (url: string, password = '', expires = '', unit = 'hours') => {
      let target = `/api/share${removePrefix(url)}`;
      if (expires !== '') target += `?expires=${expires}&unit=${unit}`;
      let body = '{}';
      if (password != '' || expires !== '' || unit !== 'hours') {
        body = JSON.stringify({ password, expires: expires.toString(), unit });
      }
      return this.fetchURL(target, { method: 'POST', body });
    },
  };

  // api/files.ts

  files = {
    fetch: (url: string, encoding = false) =>
      this.fetchURL(`/api/resources${removePrefix(url)}`, {
        headers: { 'X-Encoding': encoding ? 'true' : 'false' },
      }),
    fetchAll: (url: string) => this.fetchURL(`/api/resources/recursive${removePrefix(url)}`, {}),
    remove: (url: string) => this.resourceAction(url, 'DELETE'),
    put: (url: string, content = '') => this.resourceAction(url, 'PUT', content),
    /**
     * postResources: an XMLHttpRequest with X-Auth and the content as is. XHR labels a string
     * as fetch does, so "" (a new folder or empty file) goes as an empty text/plain body.
     */
    post: (url: string, content: string | Blob | ArrayBuffer = '', overwrite = false) =>
      fetch(`${this.origin}/api/resources${removePrefix(url)}?override=${overwrite}`, {
        method: 'POST',
        headers: { ...this.cookie(), 'X-Auth': this.jwt },
        body: content,
      }),
    move: (items: { from: string; to: string }[], overwrite = false, rename = false) =>
      this.moveCopy(items, false, overwrite, rename),
    copy: (items: { from: string; to: string }[], overwrite = false, rename = false) =>
      this.moveCopy(items, true, overwrite, rename),
    checksum: (url: string, algo: string) => this.resourceAction(`${url}?checksum=${algo}`, 'GET'),
    usage: (url: string) => this.fetchURL(`/api/usage${removePrefix(url)}`, {}),
  };

  private resourceAction(url: string, method: string, content?: string) {
    const opts: { method: string; body?: string } = { method };
    if (content) opts.body = content;
    return this.fetchURL(`/api/resources${removePrefix(url)}`, opts);
  }

  private moveCopy(
    items: { from: string; to: string }[],
    copy: boolean,
    overwrite: boolean,
    rename: boolean,
  ) {
    return Promise.all(
      items.map((item) => {
        const to = encodeURIComponent(removePrefix(item.to));
        const url = `${item.from}?action=${copy ? 'copy' : 'rename'}&destination=${to}&override=${overwrite}&rename=${rename}`;
        return this.resourceAction(url, 'PATCH');
      }),
    );
  }

  // api/search.ts

  search(base: string, query: string) {
    base = removePrefix(base);
    if (!base.endsWith('/')) base += '/';
    return this.fetchURL(`/api/search${base}?query=${encodeURIComponent(query)}`, {});
  }

  // api/pub.ts: no renewal and no logout, but fetchURL still sends X-Auth.

  pub = {
    fetch: (url: string, password = '') =>
      this.fetchURL(`/api/public/share${removePrefix(url)}`, {
        headers: { 'X-SHARE-PASSWORD': encodeURIComponent(password) },
      }),
  };

  // api/tus.ts: tus-js-client with the old client's options.

  /** `chunkSize` is the one the index page hands the old client; retries are left out (retryCount 0). */
  tusOptions(filePath: string, chunkSize: number, overwrite = false): tus.UploadOptions {
    return {
      endpoint: `${this.origin}/api/tus${removePrefix(filePath)}?override=${overwrite}`,
      chunkSize,
      // What the old client passes for a retry count of 0.
      retryDelays: undefined,
      parallelUploads: 1,
      storeFingerprintForResuming: false,
      headers: { 'X-Auth': this.jwt },
      onShouldRetry: (err) => (err.originalResponse ? err.originalResponse.getStatus() : 0) !== 409,
    };
  }
}

/** api/utils.ts removePrefix: drops the page's first segment ("/files", "/share"). */
export function removePrefix(url: string): string {
  url = url.split('/').splice(2).join('/');
  if (url === '') url = '/';
  if (url[0] !== '/') url = '/' + url;
  return url;
}
