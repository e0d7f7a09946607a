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
    expect(resolveLocale('nl-NL')).toBe('nl-be');
  });

  it('falls back to English', () => {
    expect(resolveLocale('')).toBe('en');
    expect(resolveLocale(undefined)).toBe('en');
    expect(resolveLocale('xx-YY')).toBe('en');
  });

  it('knows the right-to-left languages', () => {
    expect(isRtl('he')).toBe(true);
    expect(isRtl('ar')).toBe(true);
    expect(isRtl('en')).toBe(false);
  });
});
