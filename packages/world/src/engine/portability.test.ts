import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assemblePrompt } from './prompt.ts';
import { runTurn } from './turn.ts';
import type { EngineWorld } from './world-types.ts';

const here = import.meta.dirname;
const sources = readdirSync(here).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));

describe('the engine runs in the browser and is deterministic', () => {
  it.each(sources)('%s uses no Node built-ins, ambient clock or ambient randomness', (name) => {
    const text = readFileSync(join(here, name), 'utf8');
    expect(text).not.toMatch(/from ['"]node:|require\(|\bprocess\.|\bBuffer\b/);
    expect(text).not.toMatch(/Math\.random|Date\.now|new Date\(\)|performance\.now/);
  });

  it('the same inputs give the same turn and prompt', () => {
    const world: EngineWorld = {
      name: 'Dice',
      entries: [{ id: 'e', content: '{{random::a::b::c::d}} {{roll::3d6}} {{pick::x::y::z}}', section: 'system-presets' }],
      variables: [{ id: 'n', type: 'number', defaultValue: 1 }],
      rules: [{ id: 'r', trigger: { type: 'every-turn' }, actions: [{ type: 'notify-player', message: '{{roll::1d100}} {{random::p::q::r::s}}' }] }],
      audioTracks: [
        { id: 'a', type: 'bgm' },
        { id: 'b', type: 'bgm' },
        { id: 'c', type: 'bgm' },
      ],
      bgmPlaylist: { tracks: ['a', 'b', 'c'], playMode: 'shuffle' },
    };
    const options = { now: '2026-01-01T00:00:00Z', seed: 9, sessionId: 'same' };
    const once = () => ({
      turn: runTurn(world, null, { ...options, userMessage: 'u', aiReply: '[n: +1]' }),
      prompt: assemblePrompt(world, null, { ...options, history: [{ role: 'user', content: 'u' }] }),
    });
    expect(once()).toEqual(once());
  });
});
