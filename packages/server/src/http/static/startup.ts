import fs from 'node:fs';
import path from 'node:path';
import type { StartupSettings } from '@filebrowser/contract';
import type { AppContext } from '../../context.js';

/** `window.FileBrowser`: what the page needs to know before it asks anything (contract 14). */
export function startupSettings(ctx: AppContext, archiveFormats?: string[]): StartupSettings {
  const s = ctx.store.settings.get();
  const { config } = ctx;
  const recaptcha = s.authMethod === 'json' ? s.auther.recaptcha : null;
  return {
    AuthMethod: s.authMethod,
    BaseURL: config.baseURL,
    CSS: !!s.branding.files && fs.existsSync(path.join(s.branding.files, 'custom.css')),
    Color: s.branding.color,
    DisableExternal: s.branding.disableExternal,
    DisableUsedPercentage: s.branding.disableUsedPercentage,
    EnableExec: !config.disableExec,
    EnableThumbs: !config.disableThumbnails,
    HideLoginButton: s.hideLoginButton,
    LoginPage: s.authMethod === 'json' || s.authMethod === 'hook',
    LogoutPage: s.logoutPage || '/login',
    Name: s.branding.name,
    NoAuth: s.authMethod === 'noauth',
    ReCaptcha: !!(recaptcha?.key && recaptcha.secret),
    ...(recaptcha && {
      ReCaptchaHost: recaptcha.host || 'https://www.google.com',
      ReCaptchaKey: recaptcha.key,
    }),
    ResizePreview: !config.disablePreviewResize,
    Signup: s.signup,
    StaticURL: `${config.baseURL}/static`,
    Theme: s.branding.theme,
    TusSettings: s.tus,
    Version: config.version,
    ...(archiveFormats && { ArchiveFormats: archiveFormats }),
  };
}
