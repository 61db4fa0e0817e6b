import { describe, expect, it } from 'vitest';
import { isModelId, isPlatformId, isWorldName } from './platform-ids.ts';

describe('platform id forms', () => {
  it('accepts what the server issues, of the kind asked for', () => {
    expect(isPlatformId('msg_3q2-7wEXAMPLE_id-zzzz', 'message')).toBe(true);
    expect(isPlatformId('cnv_AAAAAAAAAAAAAAAAAAAAAA', 'session')).toBe(true);
    expect(isPlatformId('wld_sample_willow_street', 'world')).toBe(true);
    expect(isPlatformId('acc_yumina_samples_0001')).toBe(true);
    expect(isPlatformId('cnv_AAAAAAAAAAAAAAAAAAAAAA', 'message')).toBe(false);
  });

  it('refuses traversals, separators, encodings, unknown prefixes and non-strings', () => {
    for (const bad of ['../../../account?', 'msg_x/../../account', 'msg_%2e%2e', 'msg_a?b', 'msg_a#b', 'msg_a\\b', 'msg_', 'msg', '', 'xyz_abc', 'MSG_abc', ` msg_abc`, `msg_${'a'.repeat(65)}`, 5, null])
      expect(isPlatformId(bad), String(bad)).toBe(false);
  });

  it('world names and model ids: what the routes take, never dots only', () => {
    for (const ok of ['hp', 'gold_coins', 'spatial:zone-enter', 'high-score.v2']) expect(isWorldName(ok), ok).toBe(true);
    for (const bad of ['', '.', '..', '...', 'a/b', 'a?b', 'a#b', 'a\\b', 'a%2e', 'a b', 'x'.repeat(201)]) expect(isWorldName(bad), bad).toBe(false);
    for (const ok of ['gpt-4o', 'deepseek/deepseek-r1:free', 'hf.co/org/Model-GGUF:Q4_K_M', 'meta-llama/llama-3.1-8b-instruct'])
      expect(isModelId(ok), ok).toBe(true);
    for (const bad of ['', '..', 'a/../b', 'a//b', '/a', 'a/', 'a?b', 'a#b', 'a\\b', 'a%2fb', 'x'.repeat(201)]) expect(isModelId(bad), bad).toBe(false);
  });
});
