/** Every language the interface ships in, with its own name for the language picker. */
export const LOCALES = [
  { code: 'he', name: 'עברית', rtl: true },
  { code: 'hu', name: 'Magyar', rtl: false },
  { code: 'ar', name: 'العربية', rtl: true },
  { code: 'bg', name: 'Български', rtl: false },
  { code: 'ca', name: 'Català', rtl: false },
  { code: 'cs', name: 'Čeština', rtl: false },
  { code: 'de', name: 'Deutsch', rtl: false },
  { code: 'el', name: 'Ελληνικά', rtl: false },
  { code: 'en', name: 'English', rtl: false },
  { code: 'es', name: 'Español', rtl: false },
  { code: 'fa', name: 'فارسی', rtl: true },
  { code: 'fr', name: 'Français', rtl: false },
  { code: 'hr', name: 'Hrvatski', rtl: false },
  { code: 'is', name: 'Íslenska', rtl: false },
  { code: 'it', name: 'Italiano', rtl: false },
  { code: 'ja', name: '日本語', rtl: false },
  { code: 'ko', name: '한국어', rtl: false },
  { code: 'lv', name: 'Latviešu', rtl: false },
  { code: 'nl', name: 'Nederlands', rtl: false },
  { code: 'nl-be', name: 'Nederlands (België)', rtl: false },
  { code: 'no', name: 'Norsk bokmål', rtl: false },
  { code: 'pl', name: 'Polski', rtl: false },
  { code: 'pt-br', name: 'Português (Brasil)', rtl: false },
  { code: 'pt', name: 'Português', rtl: false },
  { code: 'ro', name: 'Română', rtl: false },
  { code: 'ru', name: 'Русский', rtl: false },
  { code: 'sk', name: 'Slovenčina', rtl: false },
  { code: 'sv-se', name: 'Svenska', rtl: false },
  { code: 'tr', name: 'Türkçe', rtl: false },
  { code: 'uk', name: 'Українська', rtl: false },
  { code: 'vi', name: 'Tiếng Việt', rtl: false },
  { code: 'zh-cn', name: '简体中文', rtl: false },
  { code: 'zh-tw', name: '繁體中文', rtl: false },
] as const;

export type LocaleCode = (typeof LOCALES)[number]['code'];

export const LOCALE_CODES: readonly LocaleCode[] = LOCALES.map((locale) => locale.code);

export const DEFAULT_LOCALE: LocaleCode = 'en';

/** Regional variants whose nearest shipped language is not simply their base language. */
const ALIASES: Record<string, LocaleCode> = {
  zh: 'zh-cn',
  'zh-hans': 'zh-cn',
  'zh-sg': 'zh-cn',
  'zh-hant': 'zh-tw',
  'zh-hk': 'zh-tw',
  'zh-mo': 'zh-tw',
  sv: 'sv-se',
  // The old File Browser stored Norwegian as "no"; browsers say "nb" (Bokmål) or "nn" (Nynorsk,
  // whose readers read Bokmål more easily than English).
  nb: 'no',
  nn: 'no',
  iw: 'he',
};

function isLocaleCode(value: string): value is LocaleCode {
  return (LOCALE_CODES as readonly string[]).includes(value);
}

/** The shipped language closest to a user's or browser's locale ("en-US" → "en", "zh-Hant-HK" → "zh-tw"). */
export function resolveLocale(input: string | null | undefined): LocaleCode {
  if (!input) return DEFAULT_LOCALE;
  const wanted = input.trim().toLowerCase().replace(/_/g, '-');
  if (isLocaleCode(wanted)) return wanted;
  const parts = wanted.split('-');
  for (let length = parts.length; length > 0; length--) {
    const prefix = parts.slice(0, length).join('-');
    const alias = ALIASES[prefix];
    if (alias) return alias;
    if (isLocaleCode(prefix)) return prefix;
  }
  return DEFAULT_LOCALE;
}

export function isRtl(code: LocaleCode): boolean {
  return LOCALES.some((locale) => locale.code === code && locale.rtl);
}
