import { describe, expect, it } from 'vitest';
import { API_MEMBERS, REMOTE_METHODS } from './members.ts';
import { argumentProblem, frameMessage, isPlainData, parentMessage, parseFrameMessage, parseParentMessage, validArguments } from './protocol.ts';
import { changedKeys, changedVariables, completeState, STATE_KEYS } from './state.ts';

const channel = 'c-123';
const world = { id: 'w1', name: 'World' };

describe('frame → parent validators', () => {
  it('accepts well-formed ready, request, storage and error messages', () => {
    expect(parseFrameMessage({ yumina: 1, channel, type: 'ready' }, channel)).toEqual({ yumina: 1, channel, type: 'ready' });
    const request = { yumina: 1, channel, type: 'request', id: 4, method: 'sendMessage', args: ['hello'] };
    expect(parseFrameMessage(request, channel)).toEqual(request);
    const storage = { yumina: 1, channel, type: 'storage', area: 'local', op: 'set', key: 'k', value: 'v' };
    expect(parseFrameMessage(storage, channel)).toEqual(storage);
    expect(parseFrameMessage({ yumina: 1, channel, type: 'storage', area: 'session', op: 'clear' }, channel)).not.toBeNull();
    expect(parseFrameMessage({ yumina: 1, channel, type: 'error', message: 'boom' }, channel)).not.toBeNull();
    const built = frameMessage(channel, { type: 'request', id: 1, method: 'ai.complete', args: [{ messages: [{ role: 'user', content: 'hi' }], includeLorebook: 'matched', stream: true }] });
    expect(parseFrameMessage(built, channel)).toEqual(built);
  });

  it('drops foreign, wrong-channel, unknown-type and malformed messages', () => {
    const bad: unknown[] = [
      null,
      'ready',
      42,
      { type: 'ready' },
      { yumina: 2, channel, type: 'ready' },
      { yumina: 1, channel: 'other', type: 'ready' },
      { yumina: 1, channel, type: 'launch' },
      { yumina: 1, channel, type: 'request', id: -1, method: 'sendMessage', args: ['x'] },
      { yumina: 1, channel, type: 'request', id: 1.5, method: 'sendMessage', args: ['x'] },
      { yumina: 1, channel, type: 'request', id: 1, method: 'eval', args: ['x'] },
      { yumina: 1, channel, type: 'request', id: 1, method: 'constructor', args: [] },
      { yumina: 1, channel, type: 'storage', area: 'cookie', op: 'set', key: 'k', value: 'v' },
      { yumina: 1, channel, type: 'storage', area: 'local', op: 'set', key: 'k', value: 7 },
      { yumina: 1, channel, type: 'storage', area: 'local', op: 'remove' },
      { yumina: 1, channel, type: 'error', message: {} },
      // the frame cannot send what only the parent makes of a request
      { yumina: 1, channel, type: 'refused', id: 1, method: 'sendMessage', error: { code: 'X', message: 'y' } },
    ];
    for (const message of bad) expect(parseFrameMessage(message, channel), JSON.stringify(message)).toBeNull();
  });

  it('answers a request of a known method with arguments that do not fit: refused with the reason, never run', () => {
    const refused: [method: string, args: unknown, code: string][] = [
      ['sendMessage', [5], 'BAD_ARGUMENTS'],
      ['sendMessage', 'hello', 'BAD_ARGUMENTS'],
      ['sendMessage', ['a', 'extra'], 'BAD_ARGUMENTS'],
      ['swipeMessage', ['msg_AAAAAAAAAAAAAAAAAAAAAA', 'up'], 'BAD_ARGUMENTS'],
      ['setAudioVolume', ['bgm', 3], 'BAD_ARGUMENTS'],
      ['navigate', ['//evil.example/'], 'NAVIGATION_REFUSED'],
      ['navigate', ['/\\evil.example/'], 'NAVIGATION_REFUSED'],
      ['navigate', ['https://evil.example/'], 'NAVIGATION_REFUSED'],
      ['navigate', ['/library\u0000'], 'NAVIGATION_REFUSED'],
      ['ai.complete', [{ messages: [] }], 'BAD_ARGUMENTS'],
      ['ai.complete', [{ messages: [{ role: 'root', content: 'x' }] }], 'BAD_ARGUMENTS'],
      ['ai.complete', [{ messages: [{ role: 'user', content: 'x' }], includeLorebook: 'some' }], 'BAD_ARGUMENTS'],
      ['fetch', [{ url: '/api/x', method: 'get', headers: [], body: null }], 'BAD_ARGUMENTS'],
      ['fetch', [{ url: '/api/x', method: 'GET', headers: [['a']], body: null }], 'BAD_ARGUMENTS'],
      ['deleteMessage', ['../../../account?'], 'INVALID_ID'],
      ['deleteMessage', ['cnv_AAAAAAAAAAAAAAAAAAAAAA'], 'INVALID_ID'],
      ['deleteCheckpoint', ['%2e%2e%2fsettings%2fai'], 'INVALID_ID'],
      ['restoreCheckpoint', ['chk_x/../../partners'], 'INVALID_ID'],
      ['listSessions', ['wld_x#'], 'INVALID_ID'],
      ['deleteSession', ['..'], 'INVALID_ID'],
      ['createSession', [''], 'INVALID_ID'],
      ['storage.set', ['..', 'v'], 'INVALID_ID'],
      ['setVariable', ['hp?x=1', 1], 'INVALID_ID'],
      ['executeAction', ['a\\b'], 'INVALID_ID'],
      ['pinModel', ['openai/../../account'], 'INVALID_ID'],
      ['stopAudio', ['..'], 'INVALID_ID'],
      ['playAudio', ['theme', { chainTo: '.' }], 'BAD_ARGUMENTS'],
    ];
    for (const [method, args, code] of refused) {
      const parsed = parseFrameMessage({ yumina: 1, channel, type: 'request', id: 7, method, args }, channel);
      expect(parsed, `${method} ${JSON.stringify(args)}`).toMatchObject({ type: 'refused', id: 7, method, error: { code } });
      expect((parsed as { error: { message: string } }).error.message).toContain(`yumina.${method}`);
    }
    expect(argumentProblem('deleteMessage', ['../../../account?'])?.message).toBe(
      'yumina.deleteMessage: argument 1 must be a message id of this platform (msg_ followed by letters, digits, _ and -); "../../../account?" is not.',
    );
  });

  it('accepts the ids and names the platform issues', () => {
    expect(validArguments('deleteMessage', ['msg_3q2-7wEXAMPLE_id-zzzz'])).toBe(true);
    expect(validArguments('listSessions', ['wld_sample_willow_street'])).toBe(true);
    expect(validArguments('deleteSession', ['cnv_AAAAAAAAAAAAAAAAAAAAAA'])).toBe(true);
    expect(validArguments('restoreCheckpoint', ['chk_AAAAAAAAAAAAAAAAAAAAAA'])).toBe(true);
    expect(validArguments('setVariable', ['gold_coins', 1, { scope: 'global' }])).toBe(true);
    expect(validArguments('storage.set', ['high-score.v2', 'x'])).toBe(true);
    expect(validArguments('setModel', ['deepseek/deepseek-r1:free'])).toBe(true);
    expect(validArguments('pinModel', ['hf.co/org/Model-GGUF:Q4_K_M'])).toBe(true);
    expect(validArguments('navigate', ['/library?tag=x#top'])).toBe(true);
  });

  it('refuses arguments that are not plain data', () => {
    expect(isPlainData({ a: [1, 'x', null, { b: true }] })).toBe(true);
    expect(isPlainData({ f: () => 1 })).toBe(false);
    expect(isPlainData(new Date())).toBe(false);
    expect(isPlainData(Number.NaN)).toBe(false);
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(isPlainData(deep)).toBe(false);
    expect(validArguments('setVariable', ['hp', { nested: [1, 2] }, { scope: 'global' }])).toBe(true);
    expect(validArguments('setVariable', ['hp', { when: new Date() }])).toBe(false);
    expect(validArguments('setVariable', ['hp', 1, { scope: 'everywhere' }])).toBe(false);
    // executeAction: an action id, or a custom event type with its members.
    expect(validArguments('executeAction', ['drink-potion'])).toBe(true);
    expect(validArguments('executeAction', ['spatial:zone-enter', { zone: 'forest' }])).toBe(true);
    expect(validArguments('executeAction', ['spatial:zone-enter', 'forest'])).toBe(false);
  });

  it('has an argument check for every remote method', () => {
    for (const method of REMOTE_METHODS) {
      // a call with no arguments is either valid (no required args) or refused — never a crash
      expect(typeof validArguments(method, [])).toBe('boolean');
    }
    expect(validArguments('continueLastMessage', [])).toBe(true);
    expect(validArguments('continueLastMessage', ['x'])).toBe(false);
  });
});

describe('parent → frame validators', () => {
  it('accepts state, responses and deltas', () => {
    const state = completeState({ variables: { hp: 10 } }, world);
    const msg = parentMessage(channel, { type: 'state', state, changed: ['variables'], changedVariables: ['hp'] });
    expect(parseParentMessage(msg, channel)).toEqual(msg);
    expect(parseParentMessage({ yumina: 1, channel, type: 'response', id: 3, ok: true, value: { a: 1 } }, channel)).not.toBeNull();
    expect(parseParentMessage({ yumina: 1, channel, type: 'response', id: 3, ok: false, error: { code: 'X', message: 'no' } }, channel)).not.toBeNull();
    expect(parseParentMessage({ yumina: 1, channel, type: 'delta', id: 3, text: 'tok' }, channel)).not.toBeNull();
    const token = `1760000000.${'A'.repeat(43)}`;
    expect(parseParentMessage({ yumina: 1, channel, type: 'assets', token }, channel)).toEqual({ yumina: 1, channel, type: 'assets', token });
    expect(parseParentMessage({ yumina: 1, channel, type: 'assets', token: null }, channel)).not.toBeNull();
  });

  it('drops malformed state and responses', () => {
    const state = completeState({}, world);
    const bad: unknown[] = [
      { yumina: 1, channel: 'x', type: 'state', state, changed: [], changedVariables: [] },
      { yumina: 1, channel, type: 'state', state: { ...state, variables: 'hp' }, changed: [], changedVariables: [] },
      { yumina: 1, channel, type: 'state', state: { ...state, mode: 'admin' }, changed: [], changedVariables: [] },
      { yumina: 1, channel, type: 'state', state: { ...state, messages: [{ id: 'm' }] }, changed: [], changedVariables: [] },
      { yumina: 1, channel, type: 'state', state, changed: ['nope'], changedVariables: [] },
      { yumina: 1, channel, type: 'response', id: 'a', ok: true, value: 1 },
      { yumina: 1, channel, type: 'response', id: 1, ok: false, error: 'bad' },
      { yumina: 1, channel, type: 'response', id: 1 },
      { yumina: 1, channel, type: 'delta', id: 1, text: 5 },
      { yumina: 1, channel, type: 'assets' },
      { yumina: 1, channel, type: 'assets', token: 'x&y=../z' },
      { yumina: 1, channel, type: 'assets', token: 5 },
    ];
    for (const message of bad) expect(parseParentMessage(message, channel)).toBeNull();
  });
});

describe('state and members', () => {
  it('completes a partial state and reports changed keys and variables', () => {
    const a = completeState({ variables: { hp: 1, gold: 2 } }, world);
    const b = completeState({ variables: { hp: 5, gold: 2, xp: 1 } }, world);
    expect(a.worldId).toBe('w1');
    expect(changedKeys(a, b)).toEqual(['variables']);
    expect(changedKeys(null, b)).toEqual([...STATE_KEYS]);
    expect(changedVariables(a.variables, b.variables).sort()).toEqual(['hp', 'xp']);
  });

  it('lists every member of the seed API exactly once', () => {
    const names = API_MEMBERS.map((m) => m.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of ['variables', 'sendMessage', 'swipeMessage', 'navigate', 'saveCheckpoint', 'ai.complete', 'setVariable', 'playAudio', 'getAudioVolume', 'storage.get', 'renderMarkdown', 'resolveAssetUrl', 'getModels', 'setPreferredProvider', 'onChange', 'offChange', 'getEntry', 'sfxVolume'])
      expect(names).toContain(name);
  });
});
