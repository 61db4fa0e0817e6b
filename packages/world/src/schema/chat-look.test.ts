import { describe, expect, it } from 'vitest';
import { validateWorld } from './validate-world.ts';

const base = { version: '20.0.0', name: 'Look' };

/** Issue 50's optional world fields: the chat's background and the character's voice. */
describe('chatBackground and voice', () => {
  it('are optional: a world without them is valid and gains neither', () => {
    const v = validateWorld(base);
    expect(v.ok).toBe(true);
    if (v.ok) {
      expect(v.world.chatBackground).toBeUndefined();
      expect(v.world.voice).toBeUndefined();
    }
  });
  it('keep a colour or a world asset, and a voice', () => {
    for (const chatBackground of ['#3b2f5c', '#fff', 'asset:abc-123']) {
      const v = validateWorld({ ...base, chatBackground, voice: { browserVoice: 'Ada', language: 'en-GB', providerVoice: 'nova', rate: 1.1, pitch: 0.9 } });
      expect(v.ok).toBe(true);
      if (v.ok) {
        expect(v.world.chatBackground).toBe(chatBackground);
        expect(v.world.voice).toEqual({ browserVoice: 'Ada', language: 'en-GB', providerVoice: 'nova', rate: 1.1, pitch: 0.9 });
      }
    }
  });
  it('refuse what is neither, naming the field', () => {
    for (const chatBackground of ['url(https://x.test/a.png)', 'red; position: fixed', '#12345']) {
      const v = validateWorld({ ...base, chatBackground });
      expect(v.ok).toBe(false);
      if (!v.ok) expect(v.issues.map((i) => i.path)).toContain('chatBackground');
    }
    const v = validateWorld({ ...base, voice: { providerVoice: 'a b', rate: 9 } });
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.issues.map((i) => i.path).sort()).toEqual(['voice.providerVoice', 'voice.rate']);
  });
});
