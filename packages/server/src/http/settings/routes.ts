import { BRAND_COLOR_PATTERN, Settings, SettingsInput, THEMES } from '@filebrowser/contract';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { audit } from '../../audit/http.js';
import type { AppContext } from '../../context.js';
import { badRequest } from '../../errors.js';
import { validateRules } from '../../rules/validate.js';
import { cleanUnsafeCommands } from '../../runner/options.js';
import { emptyCommands, type StoredSettings } from '../../store/settings.js';
import { ACCOUNT_CHANGES, SESSION_ONLY } from '../reach.js';
import { statusLine } from '../openapi/declare.js';
import { sendStatus } from '../replies.js';

function present(s: StoredSettings): Settings {
  return {
    signup: s.signup,
    hideLoginButton: s.hideLoginButton,
    createUserDir: s.createUserDir,
    minimumPasswordLength: s.minimumPasswordLength,
    userHomeBasePath: s.userHomeBasePath,
    defaults: s.defaults,
    authMethod: s.authMethod,
    rules: s.rules,
    branding: s.branding,
    tus: s.tus,
    shell: s.shell,
    commands: s.commands,
    unsafeCommands: s.unsafeCommands,
    trash: s.trash,
    audit: s.audit,
    webdav: s.webdav,
    webdavPasswords: s.webdavPasswords,
  };
}

/**
 * Merges a PUT body onto the stored settings. Unlike the old server, a key the body leaves out
 * keeps its value instead of being zeroed, and every value is checked before anything is saved.
 */
export function mergeSettings(current: StoredSettings, input: SettingsInput): StoredSettings {
  const next: StoredSettings = {
    ...current,
    ...(input.signup !== undefined && { signup: input.signup }),
    ...(input.hideLoginButton !== undefined && { hideLoginButton: input.hideLoginButton }),
    ...(input.createUserDir !== undefined && { createUserDir: input.createUserDir }),
    ...(input.minimumPasswordLength !== undefined && { minimumPasswordLength: input.minimumPasswordLength }),
    ...(input.userHomeBasePath !== undefined && { userHomeBasePath: input.userHomeBasePath }),
    defaults: { ...current.defaults, ...input.defaults },
    rules: input.rules === undefined ? current.rules : (input.rules ?? []),
    branding: { ...current.branding, ...input.branding },
    tus: { ...current.tus, ...input.tus },
    trash: { ...current.trash, ...input.trash },
    audit: { ...current.audit, ...input.audit },
    shell: input.shell === undefined ? current.shell : (input.shell ?? []),
    webdav: input.webdav ?? current.webdav,
    webdavPasswords: input.webdavPasswords ?? current.webdavPasswords,
    unsafeCommands:
      input.unsafeCommands === undefined
        ? current.unsafeCommands
        : cleanUnsafeCommands(input.unsafeCommands ?? [], badRequest),
    commands:
      input.commands === undefined
        ? current.commands
        : {
            ...emptyCommands(),
            ...Object.fromEntries(Object.entries(input.commands ?? {}).map(([k, v]) => [k, v ?? []])),
          },
  };
  if (!next.defaults.locale) next.defaults.locale = 'en';
  if (!next.defaults.viewMode) next.defaults.viewMode = 'mosaic';

  if (!(THEMES as readonly string[]).includes(next.branding.theme)) {
    throw badRequest(`theme must be one of: default (empty), light, dark`);
  }
  // A colour imported from an old database is kept as it was until someone changes it.
  const color = next.branding.color;
  if (color !== current.branding.color && color !== '' && !BRAND_COLOR_PATTERN.test(color)) {
    throw badRequest('branding color must be a hex colour such as #2979ff or a CSS colour name');
  }
  if (next.tus.chunkSize <= 0) throw badRequest('tus chunk size must be greater than 0');
  if (next.tus.retryCount < 0) throw badRequest('tus retry count must be 0 or more');
  const limit = next.defaults.uploadsLimit;
  if (limit !== undefined && (limit < 1 || limit > 10))
    throw badRequest('uploads limit must be between 1 and 10');
  if (next.defaults.perm.share && !next.defaults.perm.download) {
    throw badRequest('permission to share requires permission to download');
  }
  if (next.userHomeBasePath.split('/').includes('..'))
    throw badRequest('user home base path must stay inside the root');
  validateRules(next.rules, 'global');
  return next;
}

export function settingsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/api/settings',
      {
        config: { reach: ACCOUNT_CHANGES, needs: 'admin' },
        schema: { summary: 'the global settings (administrators)', response: { 200: Settings } },
      },
      async () => present(ctx.store.settings.get()),
    );

    app.put(
      '/api/settings',
      {
        // Never with a token: the settings hold what runs on the host (hooks, the shell), who may
        // sign up and with which scope, and how long the audit log keeps its records, so that a
        // leaked token could outlive its revocation by what it changed there.
        config: { reach: SESSION_ONLY, needs: 'admin', audit: 'settings.update' },
        schema: {
          summary: 'change the global settings: keys left out keep their value',
          body: SettingsInput,
          response: { 200: statusLine('saved') },
        },
      },
      async (request, reply) => {
        audit(request, { detail: Object.keys(request.body).sort().join(', ') });
        await ctx.store.settings.save(mergeSettings(ctx.store.settings.get(), request.body));
        return sendStatus(reply, 200);
      },
    );
  };
}
