import { afterEach, describe, expect, it, vi } from 'vitest';
import { acceptPick, MODEL_PICK_MESSAGE, openModelPicker, publishModelChoice, sessionModel } from './model-channel.ts';

describe('model picker channel', () => {
  it('accepts only a well-formed message for its own channel and account', () => {
    const ok = { type: MODEL_PICK_MESSAGE, channel: 'c1', accountId: 'acc_1', model: 'openai/gpt-4o-mini' };
    expect(acceptPick(ok, 'c1', 'acc_1')).toBe('openai/gpt-4o-mini');
    expect(acceptPick({ ...ok, accountId: 'acc_2' }, 'c1', 'acc_1')).toBeNull();
    expect(acceptPick({ ...ok, channel: 'c2' }, 'c1', 'acc_1')).toBeNull();
    expect(acceptPick({ ...ok, type: 'other' }, 'c1', 'acc_1')).toBeNull();
    expect(acceptPick({ ...ok, model: '<script>' }, 'c1', 'acc_1')).toBeNull();
    expect(acceptPick('nope', 'c1', 'acc_1')).toBeNull();
  });

  it('opens the model browser with a random account-bound channel and receives the choice', async () => {
    const opened: string[] = [];
    const picks: string[] = [];
    const a = openModelPicker('acc_1', '/app/models', (m) => picks.push(m), (u) => opened.push(u));
    const b = openModelPicker('acc_1', '/app/models', () => {}, () => {});
    expect(a.channel).not.toBe(b.channel);
    b.close();
    const url = new URL(opened[0]!, 'http://localhost');
    expect(url.pathname).toBe('/app/models');
    expect(url.searchParams.get('account')).toBe('acc_1');
    expect(url.searchParams.get('surface')).toBe('companion');
    expect(url.searchParams.get('pick')).toBe(a.channel);
    // The model browser tab answers; a page opened for another account would be ignored.
    expect(publishModelChoice(`?pick=${a.channel}&account=acc_2`, 'evil/model')).toBe(true);
    expect(publishModelChoice(url.search, 'deepseek/deepseek-r1:free')).toBe(true);
    expect(publishModelChoice('?pick=unrelated&account=acc_1', 'x')).toBe(false);
    await expect.poll(() => picks).toEqual(['deepseek/deepseek-r1:free']);
    a.close();
  });

  describe('the chosen model is stored for the account in the game tab session', () => {
    afterEach(() => {
      vi.unstubAllGlobals();
    });

    it('a pick is kept per account in sessionStorage (this tab only), and another account of the tab does not get it', async () => {
      const session = new Map<string, string>();
      vi.stubGlobal('sessionStorage', {
        getItem: (k: string) => session.get(k) ?? null,
        setItem: (k: string, v: string) => void session.set(k, v),
      });
      // Never localStorage (shared by every tab and kept across sessions).
      vi.stubGlobal('localStorage', {
        getItem: () => {
          throw new Error('localStorage must not be used');
        },
        setItem: () => {
          throw new Error('localStorage must not be used');
        },
      });
      expect(sessionModel('acc_1')).toBeNull();
      const picks: string[] = [];
      const picker = openModelPicker('acc_1', '/app/models', (m) => picks.push(m), () => {});
      expect(publishModelChoice(`?pick=${picker.channel}&account=acc_1`, 'vendor/model-a')).toBe(true);
      await expect.poll(() => picks).toEqual(['vendor/model-a']);
      picker.close();
      expect(sessionModel('acc_1')).toBe('vendor/model-a');
      expect(sessionModel('acc_2')).toBeNull();
      expect([...session.keys()].filter((k) => k.includes('acc_1'))).toHaveLength(1);
    });
  });
});
