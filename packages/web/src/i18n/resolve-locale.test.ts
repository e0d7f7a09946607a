import { describe, expect, it } from 'vitest';
import { isRtl, resolveLocale } from './locales';

describe('resolveLocale', () => {
  it('keeps shipped codes', () => {
    expect(resolveLocale('pt-br')).toBe('pt-br');
    expect(resolveLocale('zh-tw')).toBe('zh-tw');
    expect(resolveLocale('he')).toBe('he');
  });

  it('reads browser-style codes', () => {
    expect(resolveLocale('en-US')).toBe('en');
    expect(resolveLocale('pt_BR')).toBe('pt-br');
    expect(resolveLocale('pt-PT')).toBe('pt');
    expect(resolveLocale('de-AT')).toBe('de');
    expect(resolveLocale('zh-Hant-HK')).toBe('zh-tw');
    expect(resolveLocale('zh')).toBe('zh-cn');
    expect(resolveLocale('sv')).toBe('sv-se');
    expect(resolveLocale('nl-NL')).toBe('nl');
    expect(resolveLocale('nl-BE')).toBe('nl-be');
  });

  it('keeps the language codes the old File Browser stored in profiles', () => {
    for (const code of ['bg', 'cs', 'fa', 'hr', 'lv', 'nl', 'nl-be', 'no', 'vi', 'sv-se', 'pt-br', 'zh-cn']) {
      expect(resolveLocale(code)).toBe(code);
    }
    expect(resolveLocale('pt-pt')).toBe('pt');
    expect(resolveLocale('sv')).toBe('sv-se');
  });

  it('maps browser languages (Accept-Language tags) to the newer locales', () => {
    expect(resolveLocale('bg-BG')).toBe('bg');
    expect(resolveLocale('cs-CZ')).toBe('cs');
    expect(resolveLocale('fa-IR')).toBe('fa');
    expect(resolveLocale('hr-HR')).toBe('hr');
    expect(resolveLocale('lv-LV')).toBe('lv');
    expect(resolveLocale('nl')).toBe('nl');
    expect(resolveLocale('nb-NO')).toBe('no');
    expect(resolveLocale('nb')).toBe('no');
    expect(resolveLocale('nn-NO')).toBe('no');
    expect(resolveLocale('no')).toBe('no');
    expect(resolveLocale('vi-VN')).toBe('vi');
  });

  it('falls back to English', () => {
    expect(resolveLocale('')).toBe('en');
    expect(resolveLocale(undefined)).toBe('en');
    expect(resolveLocale('xx-YY')).toBe('en');
  });

  it('knows the right-to-left languages', () => {
    expect(isRtl('he')).toBe(true);
    expect(isRtl('ar')).toBe(true);
    expect(isRtl('fa')).toBe(true);
    expect(isRtl('en')).toBe(false);
  });
});
