import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import en from './locales/en.json';
import { DEFAULT_LOCALE, isRtl, resolveLocale, type LocaleCode } from './locales';

type Translation = typeof en;

// Every language but the fallback is a separate chunk, fetched when someone needs it. A locale
// whose file is not there yet falls back to English.
const loaders = import.meta.glob<{ default: Translation }>(['./locales/*.json', '!./locales/en.json']);

let initialized: Promise<unknown> | null = null;

function ensureInitialized(): Promise<unknown> {
  initialized ??= i18n.use(initReactI18next).init({
    resources: { [DEFAULT_LOCALE]: { translation: en } },
    lng: DEFAULT_LOCALE,
    fallbackLng: DEFAULT_LOCALE,
    // Codes such as pt-br and zh-cn stay lower-case, matching the locale files and the user's setting.
    lowerCaseLng: true,
    load: 'currentOnly',
    interpolation: { escapeValue: false },
    returnNull: false,
  });
  return initialized;
}

async function loadLanguage(code: LocaleCode): Promise<boolean> {
  if (i18n.hasResourceBundle(code, 'translation')) return true;
  const loader = loaders[`./locales/${code}.json`];
  if (!loader) return false;
  const translation = (await loader()).default;
  i18n.addResourceBundle(code, 'translation', translation, true, true);
  return true;
}

/** Switches the interface language (and text direction) to the shipped language closest to `locale`. */
export async function setLanguage(locale: string | null | undefined): Promise<void> {
  await ensureInitialized();
  let code = resolveLocale(locale);
  try {
    if (!(await loadLanguage(code))) code = DEFAULT_LOCALE;
  } catch {
    // A chunk that fails to load (e.g. after a redeploy) must not leave the page without text.
    code = DEFAULT_LOCALE;
  }
  if (i18n.language !== code) await i18n.changeLanguage(code);
  const root = document.documentElement;
  root.lang = code;
  root.dir = isRtl(code) ? 'rtl' : 'ltr';
}

export async function initI18n(locale: string | null | undefined): Promise<void> {
  await setLanguage(locale);
}

export { i18n };
