import { describe, expect, it } from 'vitest';
import { apiPath, UnsafePathSegmentError } from './api-path.ts';

describe('apiPath', () => {
  it('encodes every segment, so separators, queries and fragments stay inside it', () => {
    expect(apiPath('sessions', 'cnv_a', 'messages', 'msg_b')).toBe('/api/sessions/cnv_a/messages/msg_b');
    expect(apiPath('sessions', 'cnv_a', 'checkpoints', '../../../settings/ai?')).toBe('/api/sessions/cnv_a/checkpoints/..%2F..%2F..%2Fsettings%2Fai%3F');
    expect(apiPath('models', 'pins', 'deepseek/deepseek-r1:free')).toBe('/api/models/pins/deepseek%2Fdeepseek-r1%3Afree');
    expect(apiPath('worlds', 'w', 'storage', '%2e%2e#x\\y')).toBe('/api/worlds/w/storage/%252e%252e%23x%5Cy');
    // What the browser would send: the path stays where it was built.
    expect(new URL(apiPath('sessions', 'cnv_a', 'messages', '../../../account?'), 'http://h').pathname).toBe('/api/sessions/cnv_a/messages/..%2F..%2F..%2Faccount%3F');
  });

  it('refuses an empty or dots-only segment (the browser would resolve it)', () => {
    for (const bad of ['', '.', '..', '...']) expect(() => apiPath('worlds', 'w', 'storage', bad), bad).toThrow(UnsafePathSegmentError);
    try {
      apiPath('sessions', '..');
    } catch (error) {
      expect((error as UnsafePathSegmentError).code).toBe('INVALID_ID');
    }
  });
});
