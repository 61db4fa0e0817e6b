import { describe, expect, it } from 'vitest';
import { CHAPTERS } from './levels.ts';
import type { ChapterMarker } from './notebook.ts';
import { CHAPTER_SCENES, chooseIntroduction, LOCALES, REACTIONS, resolveLocale, SUGGESTIONS } from './scenes.ts';

describe('authored content', () => {
  it('has five chapter scenes with topics and three introductions in English, Simplified Chinese and Spanish', () => {
    expect(Object.keys(CHAPTER_SCENES)).toEqual(['day', 'night', 'pool', 'fog', 'roof']);
    for (const chapter of CHAPTERS) {
      for (const locale of LOCALES) {
        const scene = CHAPTER_SCENES[chapter][locale];
        expect(scene.title.length).toBeGreaterThan(0);
        expect(scene.topics.length).toBeGreaterThanOrEqual(3);
        for (const kind of ['first', 'replay', 'imported'] as const) expect(scene.introductions[kind].length).toBeGreaterThan(10);
      }
      expect(CHAPTER_SCENES[chapter]['zh-CN'].setting).toMatch(/[\u4e00-\u9fff]/);
      expect(CHAPTER_SCENES[chapter].es.setting).not.toBe(CHAPTER_SCENES[chapter].en.setting);
    }
    for (const r of [...Object.values(REACTIONS), ...Object.values(SUGGESTIONS)]) {
      for (const locale of LOCALES) expect(r[locale].length).toBeGreaterThan(0);
    }
  });

  it('resolves browser locales', () => {
    expect(resolveLocale('zh-Hans-CN')).toBe('zh-CN');
    expect(resolveLocale('es-MX')).toBe('es');
    expect(resolveLocale('fr')).toBe('en');
    expect(resolveLocale(undefined)).toBe('en');
  });
});

describe('chapter introductions', () => {
  const marker = (chapter: ChapterMarker['chapter'], cycle: number): ChapterMarker => ({ chapter, cycle, kind: 'first', at: 0 });

  it('shows the first introduction once per account and campaign cycle', () => {
    const first = chooseIntroduction({ chapter: 'day', cycle: 1, markers: [], completedCycles: 0, locale: 'en' });
    expect(first).toMatchObject({ kind: 'first', chapter: 'day', cycle: 1 });
    expect(first!.text).toBe(CHAPTER_SCENES.day.en.introductions.first);
    expect(chooseIntroduction({ chapter: 'day', cycle: 1, markers: [marker('day', 1)], completedCycles: 0, locale: 'en' })).toBeNull();
    expect(chooseIntroduction({ chapter: 'night', cycle: 1, markers: [marker('day', 1)], completedCycles: 0, locale: 'es' })).toMatchObject({
      kind: 'first',
      text: CHAPTER_SCENES.night.es.introductions.first,
    });
  });

  it('gives an imported late save an introduction, not an invented shared history', () => {
    const intro = chooseIntroduction({ chapter: 'pool', cycle: 1, markers: [], completedCycles: 0, locale: 'en' });
    expect(intro?.kind).toBe('imported');
    expect(intro?.text).toMatch(/haven't|first/i);
  });

  it('gives a different replay greeting after a completed earlier adventure', () => {
    const replay = chooseIntroduction({ chapter: 'day', cycle: 2, markers: [marker('day', 1)], completedCycles: 1, locale: 'zh-CN' });
    expect(replay?.kind).toBe('replay');
    expect(replay?.text).toBe(CHAPTER_SCENES.day['zh-CN'].introductions.replay);
    expect(replay?.text).not.toBe(CHAPTER_SCENES.day['zh-CN'].introductions.first);
  });
});
