import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UPDATES_LABELS } from './labels.ts';
import { UpdateHistory } from './UpdateHistory.tsx';

describe('UpdateHistory before the first save', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('shows the save-first hint for a new or unsaved draft and asks nothing of the server', () => {
    const fetchSpy = vi.fn();
    vi.stubGlobal('fetch', fetchSpy);
    for (const props of [{ worldId: null }, { worldId: undefined }, { worldId: 'wld_1', unsavedDraft: true }]) {
      const html = renderToString(createElement(UpdateHistory, { ...props, surfaceCanEdit: true, language: 'ja' }));
      expect(html).toContain(UPDATES_LABELS.ja.saveFirst);
      expect(html).not.toContain('update-list');
    }
    expect(fetchSpy).not.toHaveBeenCalled();
  });

  it('a saved world renders the history list instead of the hint', () => {
    const html = renderToString(createElement(UpdateHistory, { worldId: 'wld_1', surfaceCanEdit: false, language: 'es' }));
    expect(html).toContain(UPDATES_LABELS.es.history);
    expect(html).toContain('update-list');
    expect(html).not.toContain(UPDATES_LABELS.es.saveFirst);
  });
});
