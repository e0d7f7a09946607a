import { BRAND_COLOR_PATTERN, DEFAULT_BRAND_COLOR } from '@filebrowser/contract';

/** Where the app's icons live under /static, with File Browser's names (a branding folder may replace them). */
export const ICONS_DIR = 'img/icons';
export const FAVICON = `${ICONS_DIR}/favicon.ico`;
export const MASKABLE_ICON = `${ICONS_DIR}/maskable-512x512.png`;
const ANY_ICONS = [
  { file: `${ICONS_DIR}/android-chrome-192x192.png`, sizes: '192x192' },
  { file: `${ICONS_DIR}/android-chrome-512x512.png`, sizes: '512x512' },
];

export interface ManifestInput {
  name: string;
  color: string;
  baseURL: string;
  /** False when a branding folder has its own icons but no maskable one: ours would show our logo. */
  maskable: boolean;
}

/**
 * The web app manifest. Start URL and scope are the base URL, so an installed app opens the
 * listing and keeps every page of this server (and only those) in its window.
 */
export function webManifest({ name, color, baseURL, maskable }: ManifestInput) {
  const appName = name || 'File Browser';
  const icon = (file: string, sizes: string, purpose: string) => ({
    src: `${baseURL}/static/${file}`,
    sizes,
    type: 'image/png',
    purpose,
  });
  return {
    id: `${baseURL}/`,
    name: appName,
    short_name: appName,
    start_url: `${baseURL}/`,
    scope: `${baseURL}/`,
    display: 'standalone',
    background_color: '#ffffff',
    theme_color: BRAND_COLOR_PATTERN.test(color) ? color : DEFAULT_BRAND_COLOR,
    icons: [
      ...ANY_ICONS.map(({ file, sizes }) => icon(file, sizes, 'any')),
      ...(maskable ? [icon(MASKABLE_ICON, '512x512', 'maskable')] : []),
    ],
  };
}
