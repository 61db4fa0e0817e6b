/**
 * One turn of a large world: runTurn + assemblePrompt for 1,000 entries, 200 variables and 200
 * messages of history. Goal (issue 8): under 5 ms median. Beside it: the two halves alone, and
 * the keyword scan done the way many engines do it (one `\b` RegExp per keyword, built each
 * turn) over the same entries, as a reference point.
 */
import { bench, describe } from 'vitest';
import {
  assemblePrompt,
  createInitialState,
  type EngineEntry,
  type EngineRule,
  type EngineVariable,
  type EngineWorld,
  type HistoryMessage,
  runTurn,
} from '../packages/world/src/index.ts';

const WORDS = ['dragon', 'castle', 'forest', 'river', 'sword', 'shield', 'king', 'queen', 'tavern', 'merchant', 'wizard', 'storm', 'ruin', 'temple', 'bridge', 'cave', 'market', 'harbor', 'tower', 'garden'];

function word(index: number): string {
  return `${WORDS[index % WORDS.length]}${Math.floor(index / WORDS.length)}`;
}

function buildWorld(): EngineWorld {
  const variables: EngineVariable[] = [];
  for (let index = 0; index < 200; index++) {
    const kind = index % 4;
    if (kind === 0) variables.push({ id: `stat-${index}`, type: 'number', defaultValue: 50, min: 0, max: 100, behaviorRules: 'Rises with success, falls with failure; 5 to 10 per event.' });
    else if (kind === 1) variables.push({ id: `flag-${index}`, type: 'boolean', defaultValue: false, description: 'a story flag' });
    else if (kind === 2) variables.push({ id: `note-${index}`, type: 'string', defaultValue: 'calm', description: 'a mood' });
    else variables.push({ id: `bag-${index}`, type: 'json', defaultValue: { items: ['rope', 'torch'], gold: 10 } });
  }
  const entries: EngineEntry[] = [];
  for (let index = 0; index < 1000; index++) {
    if (index < 20) {
      entries.push({ id: `preset-${index}`, content: `System preset ${index} for {{char}} and {{user}}. Turn {{turnCount}}.`, section: 'system-presets', position: index });
    } else if (index < 30) {
      entries.push({ id: `example-${index}`, content: '<START>\n{{user}}: Hello there.\n{{char}}: Greetings, traveler.', section: 'examples', position: index });
    } else if (index < 40) {
      entries.push({ id: `post-${index}`, content: `Post-history rule ${index}: stay in character.`, section: 'post-history', position: index });
    } else {
      entries.push({
        id: `lore-${index}`,
        content: `Lore about ${word(index)}: ${'A long paragraph of world detail. '.repeat(8)}Current value {{stat-0}}.`,
        section: 'chat-history',
        position: index,
        keywords: [word(index), `${word(index)}-alt`, `old ${word(index + 7)}`],
        matchWholeWords: index % 2 === 0,
        ...(index % 5 === 0 ? { secondaryKeywords: [word(index + 1), word(index + 2)], secondaryKeywordLogic: 'AND_ANY' as const } : {}),
        ...(index % 7 === 0 ? { conditions: [{ variableId: 'stat-0', operator: 'gte' as const, value: 10 }] } : {}),
        ...(index % 50 === 0 ? { depth: 2 } : {}),
      });
    }
  }
  const rules: EngineRule[] = [];
  for (let index = 0; index < 50; index++) {
    rules.push({
      id: `rule-${index}`,
      trigger: index % 3 === 0 ? { type: 'every-turn' } : index % 3 === 1 ? { type: 'keyword', keywords: [word(index)] } : { type: 'state-change', variableId: `stat-${(index % 50) * 4}` },
      conditions: [{ variableId: 'stat-0', operator: 'gt', value: 5 }],
      actions: [{ type: 'modify-variable', variableId: `stat-${(index % 50) * 4}`, operation: 'add', value: 1 }],
      priority: index % 4,
      cooldownTurns: index % 2,
    });
  }
  return {
    name: 'Benchmark Realm',
    entries,
    variables,
    rules,
    reactions: [],
    audioTracks: [
      { id: 'calm', type: 'bgm' },
      { id: 'battle', type: 'bgm' },
    ],
    bgmPlaylist: { tracks: ['calm'], playMode: 'loop' },
    conditionalBGM: [{ id: 'fight', targetTrackId: 'battle', triggerType: 'variable', conditions: [{ variableId: 'stat-4', operator: 'gt', value: 60 }] }],
    settings: { lorebookScanDepth: 4, lorebookRecursionDepth: 1 },
  };
}

const world = buildWorld();
const history: HistoryMessage[] = [];
for (let index = 0; index < 200; index++) {
  history.push({
    role: index % 2 === 0 ? 'user' : 'assistant',
    content: `Message ${index}: we travel past the ${word(index * 3 + 40)} and talk about the ${word(index * 5 + 41)}. ${'Some more narrative text to fill a realistic message. '.repeat(4)}`,
  });
}
const state = createInitialState(world);
const userMessage = `I draw my sword near the ${word(45)} and the ${word(60)}.`;
const aiReply = `The fight begins. [stat-0: -5] [stat-4: +20] [flag-1: toggle] [note-2: set tense] [bag-3.items: push "map"] [Note: stays]`;
const options = { now: '2026-05-01T12:00:00Z', seed: 42, sessionId: 'bench' };

function fullTurn(): void {
  const prompt = assemblePrompt(world, state, { ...options, history: [...history, { role: 'user', content: userMessage }] });
  runTurn(world, state, { ...options, userMessage, aiReply, skippedEntries: prompt.skippedEntries });
}

/** Reference: the common approach, one `\b` RegExp per keyword compiled every turn. */
function naiveKeywordScan(): number {
  const text = history
    .slice(-4)
    .map((message) => message.content)
    .join('\n');
  let hits = 0;
  for (const entry of world.entries) {
    for (const keyword of entry.keywords ?? []) {
      if (new RegExp(`\\b${keyword.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`, 'i').test(text)) hits++;
    }
  }
  return hits;
}

describe('world turn: 1,000 entries, 200 variables, 200 messages (goal < 5 ms median)', () => {
  bench('runTurn + assemblePrompt', fullTurn);
  bench('assemblePrompt alone', () => {
    assemblePrompt(world, state, { ...options, history: [...history, { role: 'user', content: userMessage }] });
  });
  bench('runTurn alone (skipped entries passed in)', () => {
    runTurn(world, state, { ...options, userMessage, aiReply, skippedEntries: [] });
  });
  bench('reference: naive \\b RegExp keyword scan only', () => {
    naiveKeywordScan();
  });
});
