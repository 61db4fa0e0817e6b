import { describe, expect, it } from 'vitest';
import { pickLanguage, UPDATES_LABELS } from './labels.ts';

describe('update-record labels', () => {
  it('exist in the five languages with the same keys, none empty', () => {
    expect(Object.keys(UPDATES_LABELS).sort()).toEqual(['en', 'es', 'ja', 'zh-Hans', 'zh-Hant']);
    const keys = Object.keys(UPDATES_LABELS.en).sort();
    for (const [lang, labels] of Object.entries(UPDATES_LABELS)) {
      expect(Object.keys(labels).sort(), lang).toEqual(keys);
      for (const [key, value] of Object.entries(labels)) {
        const text = typeof value === 'function' ? (value as (n: number) => string)(2) : value;
        expect(text.trim().length, `${lang}.${key}`).toBeGreaterThan(0);
        if (lang !== 'en' && key !== 'from') expect(text, `${lang}.${key} is translated`).not.toBe(typeof value === 'function' ? (UPDATES_LABELS.en[key as 'added'])(2) : UPDATES_LABELS.en[key as 'history']);
      }
    }
  });

  it('picks the browser language, with the Chinese script chosen by tag or region', () => {
    expect(pickLanguage(['zh-TW'])).toBe('zh-Hant');
    expect(pickLanguage(['zh-Hant-HK'])).toBe('zh-Hant');
    expect(pickLanguage(['zh-CN'])).toBe('zh-Hans');
    expect(pickLanguage(['zh'])).toBe('zh-Hans');
    expect(pickLanguage(['ja-JP'])).toBe('ja');
    expect(pickLanguage(['fr-FR', 'es-MX'])).toBe('es');
    expect(pickLanguage(['de'])).toBe('en');
  });
});
