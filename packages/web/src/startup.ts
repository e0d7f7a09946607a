import type { StartupSettings } from '@filebrowser/contract';

/** What the page assumes when the server did not inject its start-up object (e.g. under `vite dev`). */
export const DEFAULT_STARTUP: StartupSettings = {
  AuthMethod: 'json',
  BaseURL: '',
  CSS: false,
  Color: '',
  DisableExternal: false,
  DisableUsedPercentage: false,
  EnableExec: true,
  EnableThumbs: true,
  HideLoginButton: false,
  LoginPage: true,
  LogoutPage: '/login',
  Name: '',
  NoAuth: false,
  ReCaptcha: false,
  ResizePreview: true,
  Signup: false,
  StaticURL: '/static',
  Theme: '',
  TusSettings: { chunkSize: 10485760, retryCount: 5 },
  Version: 'dev',
};

export const STARTUP_ELEMENT_ID = 'filebrowser-startup';

/**
 * The server injects the start-up object as a JSON data block rather than a script, because the
 * page's CSP forbids inline scripts.
 */
export function readStartupSettings(doc: Document = document): StartupSettings {
  const text = doc.getElementById(STARTUP_ELEMENT_ID)?.textContent;
  if (!text) return DEFAULT_STARTUP;
  try {
    const parsed = JSON.parse(text) as Partial<StartupSettings>;
    return { ...DEFAULT_STARTUP, ...parsed, BaseURL: (parsed.BaseURL ?? '').replace(/\/+$/, '') };
  } catch {
    return DEFAULT_STARTUP;
  }
}

declare global {
  interface Window {
    /** File Browser's global: custom scripts and old integrations read the start-up object here. */
    FileBrowser?: StartupSettings;
  }
}

export const startup: StartupSettings = readStartupSettings();
if (typeof window !== 'undefined') window.FileBrowser = startup;

/** The display name of this instance: the branding name, else the product name. */
export const instanceName = (): string => startup.Name || 'File Browser';

export const logoURL = (): string => `${startup.StaticURL}/img/logo.svg`;
