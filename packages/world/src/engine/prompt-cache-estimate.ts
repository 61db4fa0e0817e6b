import { assemblePrompt, type HistoryMessage } from './prompt.ts';
import type { EngineWorld } from './world-types.ts';

/**
 * The studio's expected saving of cache-friendly placement (issue 47): a simulated session of
 * `turns` turns whose player messages mention the world's lorebook keywords in turn (one entry's
 * keyword a turn, so entries fire and stop firing as in play), with replies of a fixed length,
 * assembled with the placement off and on. For each, the share of prompt characters that repeat
 * the previous turn's prompt as a prefix (what a provider's prompt cache can read back), and the
 * input cost relative to an uncached prompt when a cached character costs a tenth (Anthropic's
 * cache-read price; OpenAI and DeepSeek discount by a half to a tenth). Runs in the browser.
 */
export interface PromptCacheEstimate {
  off: { repeated: number; inputCost: number };
  on: { repeated: number; inputCost: number };
  /** Keyword-triggered entries the simulation mentioned. */
  entriesMentioned: number;
  /**
   * Always-sent entries above the history whose text changes during play: a variable's macro, or
   * one that changes turn by turn (`{{time}}`, `{{random}}`, `{{lastmessage}}`, ...). Each change
   * makes the whole prompt after it new to the provider's cache; the simulation keeps variables
   * at their defaults, so it does not count them.
   */
  changingHead: { entryId: string; name: string; macros: string[] }[];
}

/** Macros whose value changes from one turn to the next (the date's and weekday's change daily, and are left out). */
const TURN_MACROS = new Set(['time', 'isotime', 'idle', 'turncount', 'lastmessage', 'lastusermessage', 'lastcharmessage', 'random', 'pick', 'roll']);

function changingHead(world: EngineWorld): PromptCacheEstimate['changingHead'] {
  const variables = new Set(world.variables.map((variable) => variable.id));
  const out: PromptCacheEstimate['changingHead'] = [];
  for (const entry of world.entries) {
    if (entry.enabled === false || (entry.section !== 'system-presets' && entry.section !== 'examples')) continue;
    if ((entry.keywords ?? []).some((keyword) => keyword.trim() !== '')) continue;
    const macros = new Set<string>();
    for (const match of entry.content.matchAll(/\{\{\s*([^{}:]+?)\s*(?:::[^{}]*)?\}\}/g)) {
      const name = (match[1] ?? '').trim();
      if (variables.has(name) || TURN_MACROS.has(name.toLowerCase())) macros.add(`{{${name}}}`);
    }
    if (macros.size) out.push({ entryId: entry.id, name: entry.name || entry.id, macros: [...macros] });
  }
  return out;
}

const CACHED_PRICE = 0.1;
const REPLY = 'The scene moves on: a few sentences of narration, a line of dialogue, a detail of the place. '.repeat(4).trim();

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

function simulate(world: EngineWorld, keywords: readonly string[], turns: number): { repeated: number; inputCost: number } {
  const history: HistoryMessage[] = [];
  let previous: string | null = null;
  let repeated = 0;
  let sent = 0;
  for (let turn = 0; turn < turns; turn++) {
    const keyword = keywords.length ? keywords[turn % keywords.length] : null;
    history.push({ role: 'user', content: keyword ? `I ask about the ${keyword}. (turn ${turn + 1})` : `I look around. (turn ${turn + 1})` });
    const prompt = assemblePrompt(world, null, { history, now: '2026-01-01T12:00:00Z', seed: 1, sessionId: 'estimate' });
    const text = prompt.messages.map((m) => `${m.role}\n${m.content}`).join('\n\n');
    if (previous !== null) {
      repeated += commonPrefix(previous, text);
      sent += text.length;
    }
    previous = text;
    history.push({ role: 'assistant', content: `${REPLY} (${turn + 1})` });
  }
  const share = sent ? repeated / sent : 0;
  return { repeated: share, inputCost: 1 - share + CACHED_PRICE * share };
}

export function estimatePromptCaching(world: EngineWorld, turns = 20): PromptCacheEstimate {
  const keywords: string[] = [];
  for (const entry of world.entries) {
    const keyword = (entry.keywords ?? []).find((k) => k.trim() !== '');
    if (keyword && entry.enabled !== false) keywords.push(keyword.trim());
  }
  const withPlacement = (on: boolean): EngineWorld => ({ ...world, settings: { ...world.settings, cacheFriendlyPlacement: on } });
  return { off: simulate(withPlacement(false), keywords, turns), on: simulate(withPlacement(true), keywords, turns), entriesMentioned: keywords.length, changingHead: changingHead(world) };
}
