import { PASSWORD } from './files-helpers.js';
import {
  MARK,
  TUS,
  LOCKINFO,
  PROPPATCH,
  type View,
  type Sample,
  json,
  enc,
  jobEnded,
} from './security-reach-world.js';

/** The reach walk's requests: one for every route the app registers, WebDAV's methods included. */

// ---------------------------------------------------------------------------------------------
// A request of every route: its inside request (what an allowed caller does) and, for routes a
// folder token reaches in its folder, one aimed outside it. Keyed by `METHOD url` as registered.

export const rawUrl = (url: string) =>
  url.replace('/:id(^\\d+$)', '/1').replace(':size', 'thumb').replace(':id', 'x').replace('*', 'x');

export const davSample = (method: string, root: boolean): Sample => {
  const url = (v: View, p: string) => (root ? '/dav' : `/dav${enc(v(p))}`);
  const any = [200, 201, 204, 207, 400, 403, 404, 405, 409, 412, 415, 423];
  return { ...davRequests(method, url, root, any), echoes: true };
};

export const davRequests = (
  method: string,
  url: (v: View, p: string) => string,
  root: boolean,
  any: number[],
): Sample => {
  switch (method) {
    case 'OPTIONS':
      return { inside: (_w, v) => ({ method, url: url(v, '/docs/') }) };
    case 'GET':
    case 'HEAD':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt') }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt` }),
        ...(root && { ok: any }),
      };
    case 'PROPFIND':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/'), headers: { depth: '1' } }),
        outside: () => ({ method, url: `/dav/${MARK}-dir/`, headers: { depth: '1' } }),
      };
    case 'PUT':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/dav-new.txt'), body: 'dav' }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt`, body: 'overwritten' }),
        ...(root && { ok: any }),
      };
    case 'DELETE':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt') }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt` }),
        ...(root && { ok: any }),
      };
    case 'PROPPATCH':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt'), body: PROPPATCH }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt`, body: PROPPATCH }),
        ...(root && { ok: any }),
      };
    case 'MKCOL':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/made/') }),
        outside: () => ({ method, url: `/dav/${MARK}-dir/made/` }),
        ok: root ? any : [201],
      };
    case 'COPY':
    case 'MOVE':
      return {
        inside: (_w, v) => ({
          method,
          url: url(v, '/docs/inside.txt'),
          headers: { destination: `/dav${enc(v('/docs/moved.txt'))}` },
        }),
        outside: () => ({
          method,
          url: `/dav/secret-${MARK}.txt`,
          headers: { destination: `/dav/taken-${MARK}.txt` },
        }),
        ...(root && { ok: any }),
      };
    case 'LOCK':
      return {
        inside: (_w, v) => ({ method, url: url(v, '/docs/inside.txt'), body: LOCKINFO }),
        outside: () => ({ method, url: `/dav/secret-${MARK}.txt`, body: LOCKINFO }),
        ...(root && { ok: any }),
      };
    case 'UNLOCK':
      // No lock is held: what matters is that the guard let the caller this far.
      return {
        inside: (_w, v) => ({
          method,
          url: url(v, '/docs/inside.txt'),
          headers: { 'lock-token': '<urn:uuid:x>' },
        }),
        outside: () => ({
          method,
          url: `/dav/secret-${MARK}.txt`,
          headers: { 'lock-token': '<urn:uuid:x>' },
        }),
        ok: [204, 400, 409],
      };
  }
  throw new Error(`no WebDAV sample for ${method}`);
};

export const SAMPLES: Record<string, Sample> = {
  'GET /api/users': { inside: () => ({ method: 'GET', url: '/api/users' }) },
  'HEAD /api/users': { inside: () => ({ method: 'HEAD', url: '/api/users' }) },
  'POST /api/users': {
    inside: () => ({
      method: 'POST',
      url: '/api/users',
      ...json({
        what: 'user',
        which: [],
        current_password: PASSWORD,
        data: { username: 'made-by-walk', password: 'a-password-made-by-the-walk', scope: '/made' },
      }),
    }),
  },
  'GET /api/users/:id(^\\d+$)': { inside: (w) => ({ method: 'GET', url: `/api/users/${w.ownerId}` }) },
  'HEAD /api/users/:id(^\\d+$)': { inside: (w) => ({ method: 'HEAD', url: `/api/users/${w.ownerId}` }) },
  'PUT /api/users/:id(^\\d+$)': {
    inside: (w) => ({
      method: 'PUT',
      url: `/api/users/${w.spareUserId}`,
      ...json({ what: 'user', which: ['locale'], data: { id: w.spareUserId, locale: 'fr' } }),
    }),
  },
  'DELETE /api/users/:id(^\\d+$)': {
    inside: (w) => ({
      method: 'DELETE',
      url: `/api/users/${w.spareUserId}`,
      ...json({ current_password: PASSWORD }),
    }),
  },
  'POST /api/logout': { inside: () => ({ method: 'POST', url: '/api/logout' }) },
  'GET /api/tokens': { inside: () => ({ method: 'GET', url: '/api/tokens' }) },
  'HEAD /api/tokens': { inside: () => ({ method: 'HEAD', url: '/api/tokens' }) },
  'POST /api/tokens': {
    inside: () => ({
      method: 'POST',
      url: '/api/tokens',
      ...json({ name: 'made', expiresInDays: 0, readOnly: false, current_password: PASSWORD }),
    }),
  },
  'DELETE /api/tokens/:id': { inside: (w) => ({ method: 'DELETE', url: `/api/tokens/${w.spareTokenId}` }) },
  'GET /api/users/:id(^\\d+$)/tokens': {
    inside: (w) => ({ method: 'GET', url: `/api/users/${w.ownerId}/tokens` }),
  },
  'HEAD /api/users/:id(^\\d+$)/tokens': {
    inside: (w) => ({ method: 'HEAD', url: `/api/users/${w.ownerId}/tokens` }),
  },
  'GET /api/settings': { inside: () => ({ method: 'GET', url: '/api/settings' }) },
  'HEAD /api/settings': { inside: () => ({ method: 'HEAD', url: '/api/settings' }) },
  'PUT /api/settings': {
    inside: () => ({ method: 'PUT', url: '/api/settings', ...json({ signup: false }) }),
  },

  'GET /api/resources/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/resources${v('/docs/')}` }),
    outside: () => ({ method: 'GET', url: `/api/resources/secret-${MARK}.txt` }),
  },
  'HEAD /api/resources/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/resources${v('/docs/')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/resources/secret-${MARK}.txt` }),
  },
  'GET /api/resources/recursive/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/resources/recursive${v('/docs/')}` }),
    outside: () => ({ method: 'GET', url: `/api/resources/recursive/${MARK}-dir/` }),
  },
  'HEAD /api/resources/recursive/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/resources/recursive${v('/docs/')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/resources/recursive/${MARK}-dir/` }),
  },
  'POST /api/resources/*': {
    inside: (_w, v) => ({ method: 'POST', url: `/api/resources${v('/docs/new.txt')}`, body: 'new' }),
    outside: () => ({
      method: 'POST',
      url: `/api/resources/secret-${MARK}.txt?override=true`,
      body: 'overwritten',
    }),
  },
  'PUT /api/resources/*': {
    inside: (_w, v) => ({ method: 'PUT', url: `/api/resources${v('/docs/inside.txt')}`, body: 'changed' }),
    outside: () => ({ method: 'PUT', url: `/api/resources/secret-${MARK}.txt`, body: 'overwritten' }),
  },
  'DELETE /api/resources/*': {
    inside: (_w, v) => ({ method: 'DELETE', url: `/api/resources${v('/docs/inside.txt')}` }),
    outside: () => ({ method: 'DELETE', url: `/api/resources/secret-${MARK}.txt` }),
  },
  'PATCH /api/resources/*': {
    inside: (_w, v) => ({
      method: 'PATCH',
      url: `/api/resources${v('/docs/inside.txt')}?action=copy&destination=${encodeURIComponent(v('/docs/copy.txt'))}`,
    }),
    outside: () => ({
      method: 'PATCH',
      url: `/api/resources/secret-${MARK}.txt?action=rename&destination=${encodeURIComponent('/moved.txt')}`,
    }),
  },
  'GET /api/raw/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/raw${v('/docs/inside.txt')}` }),
    outside: () => ({ method: 'GET', url: `/api/raw/secret-${MARK}.txt` }),
  },
  'GET /api/preview/:size/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/preview/thumb${v('/docs/pic.png')}` }),
    outside: () => ({ method: 'GET', url: `/api/preview/thumb/secret-${MARK}.txt` }),
  },
  'HEAD /api/preview/:size/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/preview/thumb${v('/docs/pic.png')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/preview/thumb/secret-${MARK}.txt` }),
  },
  'GET /api/subtitle/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/subtitle${v('/docs/subs.srt')}` }),
    outside: () => ({ method: 'GET', url: `/api/subtitle/secret-${MARK}.txt` }),
  },
  'HEAD /api/subtitle/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/subtitle${v('/docs/subs.srt')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/subtitle/secret-${MARK}.txt` }),
  },
  'GET /api/search/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/search${v('/docs/')}?query=inside` }),
    outside: () => ({ method: 'GET', url: `/api/search/?query=${MARK}` }),
  },
  'HEAD /api/search/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/search${v('/docs/')}?query=inside` }),
    outside: () => ({ method: 'HEAD', url: `/api/search/?query=${MARK}` }),
  },
  'GET /api/usage/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/usage${v('/docs/')}` }),
    outside: () => ({ method: 'GET', url: `/api/usage/${MARK}-dir/` }),
  },
  'HEAD /api/usage/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/usage${v('/docs/')}` }),
    outside: () => ({ method: 'HEAD', url: `/api/usage/${MARK}-dir/` }),
  },

  'GET /api/shares': { inside: () => ({ method: 'GET', url: '/api/shares' }) },
  'HEAD /api/shares': { inside: () => ({ method: 'HEAD', url: '/api/shares' }) },
  'GET /api/share/*': { inside: () => ({ method: 'GET', url: '/api/share/docs' }) },
  'HEAD /api/share/*': { inside: () => ({ method: 'HEAD', url: '/api/share/docs' }) },
  'POST /api/share/*': { inside: () => ({ method: 'POST', url: '/api/share/docs/inside.txt', ...json({}) }) },
  'DELETE /api/share/*': { inside: (w) => ({ method: 'DELETE', url: `/api/share/${w.shareHash}` }) },
  'GET /api/public/share/*': {
    inside: (w) => ({ method: 'GET', url: `/api/public/share/${w.shareHash}/?token=${w.shareToken}` }),
    outside: (w) => ({
      method: 'GET',
      url: `/api/public/share/${w.shareHash}/secret-${MARK}.txt?token=${w.shareToken}`,
    }),
  },
  'GET /api/public/dl/*': {
    inside: (w) => ({ method: 'GET', url: `/api/public/dl/${w.shareHash}/inside.txt?token=${w.shareToken}` }),
    outside: (w) => ({
      method: 'GET',
      url: `/api/public/dl/${w.shareHash}/secret-${MARK}.txt?token=${w.shareToken}`,
    }),
  },

  'POST /api/tus': {
    inside: () => ({ method: 'POST', url: '/api/tus', headers: { ...TUS, 'upload-length': '1' } }),
    ok: [400, 403],
  },
  'HEAD /api/tus': { inside: () => ({ method: 'HEAD', url: '/api/tus', headers: TUS }), ok: [403, 404] },
  'GET /api/tus': { inside: () => ({ method: 'GET', url: '/api/tus', headers: TUS }), ok: [403, 404] },
  'PATCH /api/tus': {
    inside: () => ({
      method: 'PATCH',
      url: '/api/tus',
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: 'a',
    }),
    ok: [403, 404],
  },
  'DELETE /api/tus': { inside: () => ({ method: 'DELETE', url: '/api/tus', headers: TUS }), ok: [403, 404] },
  'POST /api/tus/*': {
    inside: (_w, v) => ({
      method: 'POST',
      url: `/api/tus${v('/docs/tus-new.txt')}`,
      headers: { ...TUS, 'upload-length': '3' },
    }),
    outside: () => ({
      method: 'POST',
      url: `/api/tus/${MARK}-up.txt`,
      headers: { ...TUS, 'upload-length': '3' },
    }),
  },
  'HEAD /api/tus/*': {
    inside: (_w, v) => ({ method: 'HEAD', url: `/api/tus${v('/docs/pending-inside.txt')}`, headers: TUS }),
    outside: () => ({ method: 'HEAD', url: `/api/tus/${MARK}-up.txt`, headers: TUS }),
  },
  'GET /api/tus/*': {
    inside: (_w, v) => ({ method: 'GET', url: `/api/tus${v('/docs/pending-inside.txt')}`, headers: TUS }),
    outside: () => ({ method: 'GET', url: `/api/tus/${MARK}-up.txt`, headers: TUS }),
  },
  'PATCH /api/tus/*': {
    inside: (_w, v) => ({
      method: 'PATCH',
      url: `/api/tus${v('/docs/pending-inside.txt')}`,
      headers: { ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: 'abc',
    }),
    outside: () => ({
      method: 'PATCH',
      url: `/api/tus/${MARK}-up.txt`,
      headers: { ...TUS, 'upload-offset': '2', 'content-type': 'application/offset+octet-stream' },
      body: 'cde',
    }),
  },
  'DELETE /api/tus/*': {
    inside: (_w, v) => ({ method: 'DELETE', url: `/api/tus${v('/docs/pending-inside.txt')}`, headers: TUS }),
    outside: () => ({ method: 'DELETE', url: `/api/tus/${MARK}-up.txt`, headers: TUS }),
  },

  'GET /api/trash': { inside: () => ({ method: 'GET', url: '/api/trash' }) },
  'HEAD /api/trash': { inside: () => ({ method: 'HEAD', url: '/api/trash' }) },
  'POST /api/trash/:id/restore': {
    inside: (w) => ({ method: 'POST', url: `/api/trash/${w.trashInside}/restore` }),
    outside: (w) => ({ method: 'POST', url: `/api/trash/${w.trashOutside}/restore` }),
  },
  'DELETE /api/trash/:id': {
    inside: (w) => ({ method: 'DELETE', url: `/api/trash/${w.trashInside}` }),
    outside: (w) => ({ method: 'DELETE', url: `/api/trash/${w.trashOutside}` }),
  },
  'DELETE /api/trash': { inside: () => ({ method: 'DELETE', url: '/api/trash' }) },

  'POST /api/jobs': {
    inside: (_w, v) => ({
      method: 'POST',
      url: '/api/jobs',
      ...json({ action: 'copy', items: [v('/docs/inside.txt')], destination: v('/docs/sub/'), rename: true }),
    }),
    outside: () => ({
      method: 'POST',
      url: '/api/jobs',
      ...json({ action: 'copy', items: [`/secret-${MARK}.txt`], destination: `/${MARK}-dir/`, rename: true }),
    }),
    after: async (answer) => {
      if (answer.status === 202) await jobEnded((JSON.parse(answer.body) as { id: string }).id);
    },
  },
  'GET /api/jobs': { inside: () => ({ method: 'GET', url: '/api/jobs' }) },
  'HEAD /api/jobs': { inside: () => ({ method: 'HEAD', url: '/api/jobs' }) },
  'GET /api/jobs/:id': {
    inside: (w) => ({ method: 'GET', url: `/api/jobs/${w.jobInside}` }),
    outside: (w) => ({ method: 'GET', url: `/api/jobs/${w.jobOutside}` }),
  },
  'HEAD /api/jobs/:id': {
    inside: (w) => ({ method: 'HEAD', url: `/api/jobs/${w.jobInside}` }),
    outside: (w) => ({ method: 'HEAD', url: `/api/jobs/${w.jobOutside}` }),
  },
  'DELETE /api/jobs/:id': {
    inside: (w) => ({ method: 'DELETE', url: `/api/jobs/${w.jobInside}` }),
    outside: (w) => ({ method: 'DELETE', url: `/api/jobs/${w.jobOutside}` }),
  },

  // Without an Upgrade a WebSocket route answers as a plain route would (the walk below also opens
  // a real WebSocket for GET).
  'HEAD /api/command': { inside: () => ({ method: 'HEAD', url: '/api/command' }), ok: [200, 400, 404, 426] },
  'HEAD /api/command/*': {
    inside: () => ({ method: 'HEAD', url: '/api/command/' }),
    ok: [200, 400, 404, 426],
  },

  'GET /api/dav/locks': { inside: () => ({ method: 'GET', url: '/api/dav/locks' }) },
  'HEAD /api/dav/locks': { inside: () => ({ method: 'HEAD', url: '/api/dav/locks' }) },
  // No such lock: the guard let the caller as far as the lookup (404), or refused it.
  'DELETE /api/dav/locks/:token': {
    inside: () => ({
      method: 'DELETE',
      url: '/api/dav/locks/opaquelocktoken:00000000-0000-0000-0000-000000000000',
    }),
    ok: [204, 404],
  },
  'GET /api/audit': { inside: () => ({ method: 'GET', url: '/api/audit' }) },
  'HEAD /api/audit': { inside: () => ({ method: 'HEAD', url: '/api/audit' }) },
  'GET /api/audit/export': { inside: () => ({ method: 'GET', url: '/api/audit/export?format=json' }) },
  'HEAD /api/audit/export': { inside: () => ({ method: 'HEAD', url: '/api/audit/export?format=json' }) },
  'GET /metrics': { inside: () => ({ method: 'GET', url: '/metrics' }) },
  'HEAD /metrics': { inside: () => ({ method: 'HEAD', url: '/metrics' }) },
};

export function sampleOf(method: string, url: string): Sample | undefined {
  if (url === '/dav' || url === '/dav/*') return davSample(method, url === '/dav');
  // File Browser took any method here; a session renews itself with each.
  if (url === '/api/renew') {
    return {
      inside: () => ({
        method,
        url,
        ...(method === 'QUERY' && { headers: { 'content-type': 'text/plain' } }),
      }),
    };
  }
  return SAMPLES[`${method} ${url}`];
}
