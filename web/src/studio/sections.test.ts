import { describe, expect, it } from 'vitest';
import { groupOf, type MyWorld } from './MyWorldsPage.tsx';
import { placeGreetings, sectionOf } from './SimpleEditor.tsx';

describe('studio sections', () => {
  it('maps every validator path to the section that shows its field', () => {
    expect(sectionOf('entries[3].keywords')).toBe('entries');
    expect(sectionOf('entryFolders[0].id')).toBe('entries');
    expect(sectionOf('variables[0].type')).toBe('variables');
    expect(sectionOf('rules[1].actions[0].message')).toBe('rules');
    expect(sectionOf('reactions[0].when')).toBe('reactions');
    expect(sectionOf('audioTracks[0].url')).toBe('audio');
    expect(sectionOf('conditionalBGM[2].targetTrackId')).toBe('audio');
    expect(sectionOf('rootComponent.files')).toBe('interface');
    expect(sectionOf('customTagColors.x')).toBe('tags');
    expect(sectionOf('settings.maxTokens')).toBe('settings');
    expect(sectionOf('name')).toBe('basics');
    expect(sectionOf('')).toBe('basics');
  });
});

describe('my worlds shelves', () => {
  const w = (status: MyWorld['status'], review: MyWorld['review']): MyWorld => ({
    id: 'w',
    name: 'n',
    description: '',
    tags: [],
    status,
    revision: 1,
    liveRevision: null,
    updatedAt: '',
    coverUrl: null,
    review,
  });
  const review = (state: string) => ({ state, kind: 'publication', submittedAt: '2026-01-01T00:00:00Z', reason: state === 'rejected' ? 'why' : null });
  it('puts each work on the shelf of its state', () => {
    expect(groupOf(w('saved', null))).toBe('draft');
    expect(groupOf(w('held', review('pending')))).toBe('review');
    expect(groupOf(w('published', review('pending')))).toBe('held-edit');
    expect(groupOf(w('published', review('approved')))).toBe('published');
    expect(groupOf(w('published', null))).toBe('published');
    expect(groupOf(w('saved', review('rejected')))).toBe('rejected');
    expect(groupOf(w('unpublished', review('approved')))).toBe('draft');
  });

  it('an entry given the greeting role moves where greetings go; moved and other entries stay as they are', () => {
    const lore = { id: 'lore', role: 'lore', section: 'chat-history', keywords: ['cafe'] };
    const frame = { id: 'frame', role: 'system', section: 'system-presets', apiRole: 'system', keywords: ['x'] };
    const edited = { ...frame, role: 'greeting' };
    expect(placeGreetings([frame, lore], [edited, lore])).toEqual([{ ...edited, section: 'chat-history', apiRole: 'assistant', keywords: [] }, lore]);
    // Reordering never re-places anything; a greeting edited further keeps the section its author chose.
    const greeting = { id: 'hello', role: 'greeting', section: 'system-presets', apiRole: 'assistant', keywords: [] };
    expect(placeGreetings([greeting, frame], [frame, greeting])).toEqual([frame, greeting]);
    expect(placeGreetings([greeting], [{ ...greeting, content: 'Hi' }])).toEqual([{ ...greeting, content: 'Hi' }]);
  });
});
