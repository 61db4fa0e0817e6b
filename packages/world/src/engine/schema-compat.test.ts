import { describe, expect, it } from 'vitest';
import { validateWorld, type WorldDefinition } from '../schema/index.ts';
import { assemblePrompt } from './prompt.ts';
import { runTurn } from './turn.ts';
import type { EngineWorld } from './world-types.ts';

/** Compile-time: the schema's normalized world is what the engine reads. */
const asEngineWorld = (world: WorldDefinition): EngineWorld => world;

describe('the engine reads validated worlds', () => {
  it('a minimal authored world validates with defaults the engine honours', () => {
    const result = validateWorld({
      version: '20.0.0',
      name: 'Tiny',
      entries: [{ id: 'hello', name: 'Hello', content: 'Greet {{user}}.', section: 'system-presets' }],
      variables: [{ id: 'hp', name: 'HP', type: 'number', defaultValue: 5, min: 0, max: 10 }],
    });
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    const world = asEngineWorld(result.world);
    const prompt = assemblePrompt(world, null, { history: [{ role: 'user', content: 'hi' }], now: 0 });
    // settings.playerName defaults to "User" in the schema
    expect(prompt.messages[0]?.content).toBe('Greet User.');
    expect(runTurn(world, null, { userMessage: 'hi', aiReply: '[hp: +20]', now: 0 }).state.variables.hp).toBe(10);
  });
});
