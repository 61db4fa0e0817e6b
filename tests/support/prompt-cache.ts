import { readFileSync } from 'node:fs';
import type { Browser } from './server.ts';

/**
 * Issue 47 points 2, 3 and 5: 20-turn sessions played through the HTTP API on each sample world
 * and on an imported card with a 27-entry lorebook (tests/fixtures/prompt-cache/saltreach-innkeeper.json),
 * with a loopback provider that records each request; the share of each request's prompt that
 * repeats the previous request's prefix. Shared by tests/prompt-cache.test.ts and
 * bench/prompt-cache.bench.ts (which also plays them on a baseline revision of the server).
 */

export const TURNS = 20;

export interface CacheSession {
  /** Label in reports (`willow-street`, `card`, ...). */
  name: string;
  /** The world JSON posted to POST /api/worlds, or the card file posted to POST /api/worlds/import. */
  source: { world: Record<string, unknown> } | { card: Buffer; fileName: string };
  /** The player's messages, one a turn (20). */
  lines: string[];
  /** The provider's reply to turn `turn` (0-based): narration with the world's directives. */
  reply(turn: number): string;
}

const repoFile = (path: string, root: URL) => readFileSync(new URL(path, root));

/** A sample world as this tree (or another checkout's `root`) ships it. */
export const sampleWorld = (name: string, root = new URL('../../', import.meta.url)) =>
  JSON.parse(repoFile(`packages/world/samples/${name}.json`, root).toString('utf8')) as Record<string, unknown>;

const BEATS = [
  'Rain ticks against the glass and somewhere a door closes.',
  'A cart rattles past outside; the lamp flame leans and rights itself.',
  'The silence afterwards is the comfortable kind, or nearly.',
  'Something in the room shifts, small enough to pretend it did not.',
];
/**
 * A reply of two short paragraphs (~120 tokens, 450–600 characters), different every turn: the
 * narration, then beats of the scene (REPLY_BEATS sets how many; 4 by default).
 */
const pad = (text: string, turn: number) => `${text}\n\n${Array.from({ length: Number(process.env.REPLY_BEATS ?? 4) }, (_, i) => BEATS[(turn + i) % BEATS.length]).join(' ')} (beat ${turn + 1})`;

const WILLOW = [
  'Hi! I just moved in across the street. Do you sell flowers for a housewarming?',
  'What would you put in a bouquet for someone who is nervous about a new job?',
  'Is there a good cafe near here? I need coffee after all these boxes.',
  'I promise I will come back tomorrow and buy something properly.',
  'Do you remember what I told you about my sister?',
  'The rain never stops here, does it? I forgot my umbrella again.',
  'Why chrysanthemums in the window? They look sad.',
  'Your grandmother started this shop? Tell me about her.',
  'I kept my promise — here I am. What is good today?',
  'Is everything all right? You look tired.',
  'Can I help you carry those buckets of roses?',
  'I saw a man shouting at you about money yesterday. Is the shop in debt?',
  'Sorry if that was too personal. I only wanted to help.',
  'Let me buy you a coffee at the cafe by the station when it rains next.',
  'Do you remember the first day I came in?',
  'Which flower means thank you?',
  'My family is visiting next week. Can you make something for my mother?',
  'The rain stopped! Want to take a walk?',
  'What do forget-me-nots mean again?',
  'Good night, Mina. Same time tomorrow?',
];
const ASHEN = [
  'I light my torch and step down the abbey stairs.',
  'I search the first room for treasure.',
  'I listen at the door. Are there goblins?',
  'I check the floor for a trap before I walk on.',
  'I attack the goblin with my rusty sword!',
  'I loot the goblin bodies.',
  'I look for a way down. We descend the stairs.',
  'Is there a shrine or altar down here? I am hurt.',
  'I pray at the altar.',
  'I keep the torch high and move on through the darkness.',
  'A tripwire! I step over it carefully.',
  'I open the chest in the corner.',
  'I ask Brother Aldric what lies below.',
  'We take the next level down the spiral stair.',
  'I count my gold and check my potions.',
  'Goblins again — I throw my torch at them!',
  'I search the goblin warband camp for loot.',
  'I follow the smell of smoke. Is it a dragon?',
  'I rest a moment against the wall and bind my wounds.',
  'I press on into the next room, sword first.',
];
const CHANGAN = [
  '先去西市，找那个胡商问话。',
  '昨夜二更你在何处？',
  '伙计平日与谁结怨？',
  '宵禁之后，还有谁能进出坊门？',
  '我出示大理寺令牌，查看尸身。',
  '死者指甲发青，是不是中了毒？',
  '城中哪里卖这种毒药？',
  '去药铺，搜查药铺。',
  '掌柜的，你最近卖过砒霜吗？',
  '鼓声响了，我们得赶在宵禁前回去。',
  '向裴少卿禀报今日所得。',
  '次日一早，再去西市打听。',
  '胡商的账本里有什么可疑之处？',
  '药铺掌柜的妻子是什么来历？',
  '她的兄长是怎么死的？',
  '我怀疑真凶另有其人。',
  '把药铺掌柜带回大理寺问话。',
  '再查一次青蚨散的来路。',
  '夜禁之时，有人看见她出门吗？',
  '请裴少卿定夺：凶手是谁？',
];
const CARD = [
  'I come in out of the fog and drop my sea-bag by the fire. A room, if you have one.',
  'I can pay. Silver marks, see? How much for the night?',
  'Who is the one-eyed man in the corner? Old Tam, they said?',
  'I came in on a herring boat from the south. The fleet is having a bad season, they say.',
  'What is this salt auction everyone is talking about?',
  'I heard the Harbour Council hangs smugglers. Is that true?',
  'Someone said you were a tidecaller once. Is that why your palm is scarred?',
  'Sorry. I did not mean to pry about your past.',
  'What is that bell I keep hearing in the fog?',
  'I need work on the docks. Who do I talk to — the guild?',
  'Is Hale Brannock here tonight?',
  'I saw a body pulled out of the harbour this morning. Drowned, they said, but the palms were cut.',
  'Tell me about Saint Orla. The sailors leave coins on the steps for her.',
  'What lies out on the reef? I saw a wreck from the deck.',
  'I went up to the Crown Terrace today and the guards turned me away.',
  'There is knocking from the cellar. I did not hear it, right?',
  'Maren Vosk came asking about you. What does she want with the inn?',
  'The storm is coming from the north-east. Should I stay ashore?',
  'Where does the untaxed salt come from? Vell?',
  'Good night, Idris. Keep a lamp lit for me.',
];

/** The four sessions of the issue's measure: the three samples and the imported card. */
export function cacheSessions(root = new URL('../../', import.meta.url)): CacheSession[] {
  const card = repoFile('tests/fixtures/prompt-cache/saltreach-innkeeper.json', new URL('../../', import.meta.url));
  return [
    {
      name: 'willow-street',
      source: { world: sampleWorld('willow-street', root) },
      lines: WILLOW,
      reply: (turn) =>
        pad(
          `Mina tucks a strand of hair behind her ear and wraps the stems in brown paper. "${turn % 3 === 0 ? 'You again' : 'Well'}," she says, and almost smiles. [affection: +${(turn % 4) + 1}] [trust: +${turn % 2}]${turn % 5 === 2 ? ` [mood: ${['shy', 'cheerful', 'tired'][turn % 3]}]` : ''}`,
          turn,
        ),
    },
    {
      name: 'ashen-depths',
      source: { world: sampleWorld('ashen-depths', root) },
      lines: ASHEN,
      reply: (turn) =>
        pad(
          `Brother Aldric's lantern swings; the stone sweats ash. ${turn % 3 === 1 ? 'A goblin lunges from the dark. [hp: -6]' : 'The room is quiet, for now.'} ${turn % 4 === 0 ? '[gold: +3]' : ''} ${turn === 6 || turn === 13 ? 'You descend the stairs to the next level.' : ''} [last-room: Hall ${turn + 1}]`,
          turn,
        ),
    },
    {
      name: 'changan-nights',
      source: { world: sampleWorld('changan-nights', root) },
      lines: CHANGAN,
      reply: (turn) =>
        `裴少卿沉吟片刻，烛火在他眼中跳动。"${turn % 2 === 0 ? '此事蹊跷' : '再查'}。" ${turn % 3 === 0 ? `[suspicion: +${(turn % 5) + 2}]` : ''}${turn === 5 ? ' [clues: push "青蚨散"]' : ''} 街上传来更夫的梆子声，远处坊门渐次落锁。\n\n${['夜风吹动窗纸，灯影摇晃。', '巷口的犬吠了两声，又归于寂静。', '案上的茶早已凉透。', '远处传来金吾卫的脚步声。'].slice(0, Number(process.env.REPLY_BEATS ?? 4)).join('')}（第${turn + 1}回）`,
    },
    {
      name: 'card',
      source: { card, fileName: 'saltreach-innkeeper.json' },
      lines: CARD,
      reply: (turn) =>
        pad(
          `Idris wipes the keel-wood bar with a rag that has seen better years. "${['Hm', 'Is that so', 'Drink first', 'Ask me later'][turn % 4]}," she says, watching the door.`,
          turn,
        ),
    },
  ];
}

/** Creates the session's world for a signed-in player (a sample posted, or the card imported): its id. */
export async function createWorld(player: Browser, session: CacheSession): Promise<string> {
  const res =
    'world' in session.source
      ? await player.fetch('/api/worlds', { method: 'POST', json: { world: session.source.world } })
      : await player.fetch('/api/worlds/import', { method: 'POST', json: { file: { name: session.source.fileName, base64: session.source.card.toString('base64') } } });
  if (res.status !== 201) throw new Error(`creating the world of ${session.name}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}

/** Turns the world's cache-friendly placement (settings.cacheFriendlyPlacement) on or off, as the studio saves it. */
export async function setCacheFriendly(player: Browser, worldId: string, on: boolean): Promise<void> {
  const got = (await (await player.fetch(`/api/worlds/${worldId}`)).json()) as { world: { settings?: Record<string, unknown> }; revision: number };
  const world = { ...got.world, settings: { ...got.world.settings, cacheFriendlyPlacement: on } };
  const res = await player.fetch(`/api/worlds/${worldId}`, { method: 'PUT', json: { world, revision: got.revision } });
  if (res.status !== 200) throw new Error(`saving the cache-friendly placement: ${res.status} ${await res.text()}`);
}

/**
 * Plays the 20 turns of `session` in a new session of `worldId`; `next(turn)` queues the provider's
 * reply before each send (the fakes' `enqueue`). Throws when a turn does not end with `done`.
 */
export async function playTurns(player: Browser, worldId: string, session: CacheSession, next: (reply: string) => void, turns = TURNS): Promise<string> {
  const created = await player.fetch(`/api/worlds/${worldId}/sessions`, { method: 'POST' });
  if (created.status !== 201 && created.status !== 200) throw new Error(`new session of ${session.name}: ${created.status} ${await created.text()}`);
  const sessionId = ((await created.json()) as { session: { id: string } }).session.id;
  for (let turn = 0; turn < turns; turn++) {
    next(session.reply(turn));
    const res = await player.fetch(`/api/sessions/${sessionId}/messages`, { method: 'POST', json: { content: session.lines[turn % session.lines.length] } });
    const text = await res.text();
    if (res.status !== 200 || !/^event: done$/m.test(text)) throw new Error(`turn ${turn + 1} of ${session.name}: ${res.status} ${text.slice(0, 400)}`);
  }
  return sessionId;
}

/** A request's prompt as one text: its messages (OpenAI-compatible `messages`, or Anthropic `system` + `messages`) serialized in order. */
export function promptText(body: Record<string, unknown>): string {
  const parts: string[] = [];
  const text = (content: unknown): string =>
    typeof content === 'string' ? content : Array.isArray(content) ? content.map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : '')).join('') : '';
  if (Array.isArray(body.system)) parts.push(`system\n${text(body.system)}`);
  else if (typeof body.system === 'string') parts.push(`system\n${body.system}`);
  for (const m of (body.messages as Array<{ role: string; content: unknown }>) ?? []) parts.push(`${m.role}\n${text(m.content)}`);
  return parts.join('\n\n');
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

export interface PrefixReport {
  /** Per request after the first: the share (0–1) of its prompt's characters that repeat the previous request's prefix. */
  shares: number[];
  /** Characters repeated over characters sent, requests 2..n (the issue's measure). */
  overall: number;
  /** The lowest share. */
  min: number;
  /**
   * Characters repeated over characters that could repeat, requests 2..n: a request's prompt less
   * what is new in it by construction (the reply to the previous turn, the player's new message and
   * everything after it: fired entries, state block, post-history). 1 when nothing the platform
   * could have kept in place moved.
   */
  repeatable: number;
}

/** The index of the latest player message in an OpenAI-compatible request (the last `user` message equal to `line`), or -1. */
function latestIndex(body: Record<string, unknown>, line: string): number {
  const messages = (body.messages as Array<{ role: string; content: unknown }>) ?? [];
  for (let i = messages.length - 1; i >= 0; i--) if (messages[i]!.role === 'user' && messages[i]!.content === line) return i;
  return -1;
}

/** The prefix-repeat shares of a session's requests, in order; `lines` (the player's messages) enables `repeatable`. */
export function prefixShares(bodies: readonly Record<string, unknown>[], lines?: readonly string[]): PrefixReport {
  const texts = bodies.map(promptText);
  const shares: number[] = [];
  let repeated = 0;
  let sent = 0;
  let couldRepeat = 0;
  for (let i = 1; i < texts.length; i++) {
    const shared = commonPrefix(texts[i - 1]!, texts[i]!);
    shares.push(shared / texts[i]!.length);
    repeated += shared;
    sent += texts[i]!.length;
    const at = lines ? latestIndex(bodies[i]!, lines[i % lines.length]!) : -1;
    if (at > 0) {
      // the previous reply (the assistant message before the new player message) onwards is new
      const stable = promptText({ ...bodies[i]!, messages: (bodies[i]!.messages as unknown[]).slice(0, at - 1) });
      couldRepeat += stable.length;
    } else couldRepeat += texts[i]!.length;
  }
  return { shares, overall: sent ? repeated / sent : 0, min: shares.length ? Math.min(...shares) : 0, repeatable: couldRepeat ? Math.min(1, repeated / couldRepeat) : 0 };
}

export const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
