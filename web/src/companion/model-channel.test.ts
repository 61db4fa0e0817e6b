import { describe, expect, it } from 'vitest';
import { acceptPick, MODEL_PICK_MESSAGE, openModelPicker, publishModelChoice } from './model-channel.ts';

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
});
