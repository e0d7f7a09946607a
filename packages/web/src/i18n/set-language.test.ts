import { afterAll, describe, expect, it } from 'vitest';
import { i18n, setLanguage } from './index';

const root = document.documentElement;

describe('setLanguage', () => {
  afterAll(async () => {
    await setLanguage('en');
  });

  it.each(['ar', 'fa', 'he'])('lays the page out right to left for %s', async (code) => {
    await setLanguage(code);
    expect(root.dir).toBe('rtl');
    expect(root.lang).toBe(code);
    expect(i18n.language).toBe(code);
  });

  it('returns to left to right for a left-to-right language', async () => {
    await setLanguage('fa');
    await setLanguage('cs');
    expect(root.dir).toBe('ltr');
    expect(root.lang).toBe('cs');
  });

  // A profile saved by the old server, or a browser's language, must load the language's own text.
  it.each([
    ['bg', 'bg'],
    ['cs-CZ', 'cs'],
    ['fa-IR', 'fa'],
    ['hr', 'hr'],
    ['lv-LV', 'lv'],
    ['nl', 'nl'],
    ['no', 'no'],
    ['nb-NO', 'no'],
    ['vi', 'vi'],
  ])('loads the catalogue for %s as %s', async (wanted, code) => {
    await setLanguage(wanted);
    expect(i18n.language).toBe(code);
    expect(root.lang).toBe(code);
    const cancel = i18n.t('buttons.cancel');
    expect(cancel).not.toBe('Cancel');
    expect(cancel).toBe(i18n.getResource(code, 'translation', 'buttons.cancel'));
  });

  it.each([
    ['cs', 1, '1 bajt'],
    ['cs', 3, '3 bajty'],
    ['cs', 5, '5 bajtů'],
    ['hr', 3, '3 bajta'],
    ['hr', 5, '5 bajtova'],
    ['lv', 10, '10 baitu'],
    ['lv', 21, '21 baits'],
    ['lv', 3, '3 baiti'],
  ])('uses the %s plural form for %i', async (code, count, text) => {
    await setLanguage(code);
    expect(i18n.t('files.bytes', { count })).toBe(text);
  });
});
