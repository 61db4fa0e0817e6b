import { CHAPTERS, type ChapterId } from './levels.ts';
import type { ChapterMarker, IntroductionKind } from './notebook.ts';

/**
 * Authored content (seed §1.2, §2.1.6, §3.3.9): the five chapter scenes, conversation topics,
 * chapter introductions, reactions and asides, in English, Simplified Chinese and Spanish.
 * None of it needs a model request or an API key.
 */
export const LOCALES = ['en', 'zh-CN', 'es'] as const;
export type Locale = (typeof LOCALES)[number];

export function resolveLocale(requested: string | null | undefined): Locale {
  const tag = (requested ?? '').toLowerCase();
  if (tag.startsWith('zh')) return 'zh-CN';
  if (tag.startsWith('es')) return 'es';
  return 'en';
}

export interface ChapterScene {
  title: string;
  /** What the scene looks like; also given to the model as setting. */
  setting: string;
  topics: string[];
  introductions: Record<IntroductionKind, string>;
}

type Localized<T> = Record<Locale, T>;

export const CHAPTER_SCENES: Readonly<Record<ChapterId, Localized<ChapterScene>>> = {
  day: {
    en: {
      title: 'Front Yard, Day',
      setting: 'A sunny front lawn. Sun falls from the sky and the first zombies shuffle in from the street.',
      topics: ['Which plant to place first', 'Saving sun for later waves', 'The lawn mowers guarding each row'],
      introductions: {
        first: "Oh! A neighbour with a lawn and a problem. I'm your companion. I'll keep you company while the zombies try their luck.",
        replay: 'Back at the front yard again? You beat this whole adventure once already. Show me how you do it faster this time.',
        imported: "Hello! We haven't really met yet, have we? I'm your companion. I can't pretend I was here for what came before, but I'm here now.",
      },
    },
    'zh-CN': {
      title: '前院·白天',
      setting: '阳光明媚的前院草坪。阳光从天而降，第一批僵尸正从街上蹒跚而来。',
      topics: ['第一株植物种什么', '为后面的波次攒阳光', '守护每一行的割草机'],
      introductions: {
        first: '哦！一位有草坪也有麻烦的邻居。我是你的伙伴，僵尸来碰运气的时候，我会陪着你。',
        replay: '又回到前院啦？你已经通关过一次整个冒险了。这次让我看看你能不能更快。',
        imported: '你好！我们还没真正认识吧？我是你的伙伴。之前发生的事我不能假装在场，但从现在起我会陪着你。',
      },
    },
    es: {
      title: 'Jardín delantero, de día',
      setting: 'Un jardín soleado. El sol cae del cielo y los primeros zombis llegan arrastrando los pies desde la calle.',
      topics: ['Qué planta poner primero', 'Guardar sol para las oleadas finales', 'Las cortadoras que protegen cada fila'],
      introductions: {
        first: '¡Oh! Un vecino con jardín y con un problema. Soy tu compañero. Te haré compañía mientras los zombis prueban suerte.',
        replay: '¿Otra vez en el jardín delantero? Ya terminaste toda la aventura una vez. Enséñame si esta vez vas más rápido.',
        imported: '¡Hola! Aún no nos conocemos, ¿verdad? Soy tu compañero. No fingiré que estuve aquí antes, pero ahora sí lo estoy.',
      },
    },
  },
  night: {
    en: {
      title: 'Front Yard, Night',
      setting: 'The lawn at night, dotted with gravestones. No sun falls from the sky; mushrooms are cheap and sleepy by day.',
      topics: ['Mushrooms that only wake at night', 'Gravestones where zombies rise', 'Making sun without daylight'],
      introductions: {
        first: 'It got dark fast. Gravestones, too. Mushrooms like the night, so maybe we will be fine.',
        replay: 'Night again. You know these gravestones by heart by now, I suppose.',
        imported: "Good evening! We're meeting for the first time here in the dark. I won't invent stories about earlier nights; let's make this one count.",
      },
    },
    'zh-CN': {
      title: '前院·夜晚',
      setting: '夜晚的草坪上散布着墓碑。天上不会掉阳光，蘑菇便宜，但白天会睡觉。',
      topics: ['只在夜里醒着的蘑菇', '僵尸从墓碑里冒出来', '没有阳光时怎么产阳光'],
      introductions: {
        first: '天黑得好快，还有墓碑。蘑菇喜欢夜晚，也许我们会没事的。',
        replay: '又是夜晚。这些墓碑你大概早就记熟了吧。',
        imported: '晚上好！我们第一次在黑暗里见面。我不会编造之前夜晚的故事，让我们把今晚过好。',
      },
    },
    es: {
      title: 'Jardín delantero, de noche',
      setting: 'El jardín de noche, lleno de lápidas. No cae sol del cielo; las setas son baratas y duermen de día.',
      topics: ['Setas que solo despiertan de noche', 'Lápidas de donde salen zombis', 'Conseguir sol sin luz del día'],
      introductions: {
        first: 'Oscureció rápido. Y hay lápidas. A las setas les gusta la noche, así que quizá estemos bien.',
        replay: 'De noche otra vez. Ya te sabrás estas lápidas de memoria.',
        imported: '¡Buenas noches! Nos vemos por primera vez aquí, a oscuras. No inventaré historias de noches anteriores; aprovechemos esta.',
      },
    },
  },
  pool: {
    en: {
      title: 'Back Yard, Pool',
      setting: 'The back yard with a swimming pool across the middle rows. Lily pads hold plants on the water.',
      topics: ['Lily pads on the water rows', 'Zombies that swim', 'Six rows to defend instead of five'],
      introductions: {
        first: 'A pool! Zombies can swim, apparently. Lily pads will let your plants stand on the water.',
        replay: 'The pool again. Same water, same swimmers, a wiser gardener.',
        imported: "Hi there! This is our first chat, right by the pool. I won't pretend we share old memories; let's start here.",
      },
    },
    'zh-CN': {
      title: '后院·泳池',
      setting: '后院中间几行是游泳池。睡莲可以让植物立在水面上。',
      topics: ['水路上的睡莲', '会游泳的僵尸', '要守六行而不是五行'],
      introductions: {
        first: '有泳池！看来僵尸会游泳。睡莲能让你的植物站在水上。',
        replay: '又到泳池了。同样的水，同样的泳者，更聪明的园丁。',
        imported: '嗨！这是我们第一次聊天，就在泳池边。我不会假装我们有旧回忆，就从这里开始吧。',
      },
    },
    es: {
      title: 'Patio trasero, piscina',
      setting: 'El patio trasero con una piscina en las filas centrales. Los nenúfares sostienen plantas sobre el agua.',
      topics: ['Nenúfares en las filas de agua', 'Zombis que nadan', 'Seis filas que defender en vez de cinco'],
      introductions: {
        first: '¡Una piscina! Parece que los zombis nadan. Los nenúfares dejan que tus plantas se apoyen en el agua.',
        replay: 'La piscina otra vez. La misma agua, los mismos nadadores, un jardinero más sabio.',
        imported: '¡Hola! Es nuestra primera charla, junto a la piscina. No fingiré recuerdos compartidos; empecemos aquí.',
      },
    },
  },
  fog: {
    en: {
      title: 'Back Yard, Fog',
      setting: 'The pool at night under thick fog. The right part of the lawn is hidden until something lights it.',
      topics: ['What hides in the fog', 'Lighting the lawn', 'Blowing the fog away'],
      introductions: {
        first: "I can't see a thing past the middle of the lawn. Whatever is out there, we'll meet it when it comes out of the fog.",
        replay: 'Fog again. You know it hides things; so do I.',
        imported: "Hello, out of the fog! First time we talk, I think. I'll only speak about what we can actually see.",
      },
    },
    'zh-CN': {
      title: '后院·浓雾',
      setting: '浓雾笼罩的夜间泳池。草坪右侧被遮住，直到有东西照亮它。',
      topics: ['雾里藏着什么', '照亮草坪', '把雾吹散'],
      introductions: {
        first: '草坪中间往后我什么都看不见。不管外面有什么，等它走出雾来我们再对付。',
        replay: '又起雾了。你知道它会藏东西，我也知道。',
        imported: '你好，从雾里来的朋友！我想这是我们第一次说话。我只谈我们真正看得见的东西。',
      },
    },
    es: {
      title: 'Patio trasero, niebla',
      setting: 'La piscina de noche bajo una niebla espesa. La parte derecha del jardín queda oculta hasta que algo la ilumina.',
      topics: ['Lo que esconde la niebla', 'Iluminar el jardín', 'Soplar la niebla'],
      introductions: {
        first: 'No veo nada más allá de la mitad del jardín. Lo que haya ahí fuera, lo veremos cuando salga de la niebla.',
        replay: 'Niebla otra vez. Sabes que esconde cosas; yo también.',
        imported: '¡Hola, desde la niebla! Creo que es la primera vez que hablamos. Solo hablaré de lo que podamos ver.',
      },
    },
  },
  roof: {
    en: {
      title: 'Roof',
      setting: 'The sloped roof of the house. Plants need flower pots, and straight shots hit the slope.',
      topics: ['Flower pots on the tiles', 'Lobbed shots over the slope', 'The last stand before the end'],
      introductions: {
        first: "We're on the roof now. Pots first, then plants. Careful: straight shots don't like slopes.",
        replay: 'The roof again. Last time you made it all the way to the end from here.',
        imported: "Hi! We're meeting up on the roof for the first time. I'll be honest: I don't know your earlier story, but I'm glad to join it now.",
      },
    },
    'zh-CN': {
      title: '屋顶',
      setting: '房子的斜屋顶。植物需要花盆，直线射击会打到斜坡上。',
      topics: ['瓦片上的花盆', '越过斜坡的抛射', '终局前的最后防线'],
      introductions: {
        first: '我们到屋顶上了。先放花盆，再种植物。小心：直线射击不喜欢斜坡。',
        replay: '又到屋顶了。上次你从这里一路打到了结局。',
        imported: '嗨！我们第一次在屋顶上见面。说实话，我不知道你之前的故事，但很高兴现在加入。',
      },
    },
    es: {
      title: 'Tejado',
      setting: 'El tejado inclinado de la casa. Las plantas necesitan macetas y los disparos rectos chocan con la pendiente.',
      topics: ['Macetas sobre las tejas', 'Disparos parabólicos sobre la pendiente', 'La última defensa antes del final'],
      introductions: {
        first: 'Ya estamos en el tejado. Primero macetas, luego plantas. Cuidado: los disparos rectos no se llevan bien con las pendientes.',
        replay: 'El tejado otra vez. La última vez llegaste desde aquí hasta el final.',
        imported: '¡Hola! Nos conocemos por primera vez en el tejado. Te seré sincero: no sé tu historia anterior, pero me alegra unirme ahora.',
      },
    },
  },
};

export function chapterScene(chapter: ChapterId, locale: Locale): ChapterScene {
  return CHAPTER_SCENES[chapter][locale];
}

export interface IntroductionDecision {
  kind: IntroductionKind;
  chapter: ChapterId;
  cycle: number;
  text: string;
}

/**
 * Which chapter introduction to show when a board of `chapter` starts, or null if this account has
 * already seen it in this campaign cycle. Markers come from the notebook (per account and cycle).
 * - replay: the player completed an earlier adventure (cycle > 1 or a completed cycle recorded);
 * - imported: a late save reached this chapter with no earlier chapter introduced in this cycle,
 *   so no shared history is invented;
 * - first: otherwise.
 */
export function chooseIntroduction(input: {
  chapter: ChapterId;
  cycle: number;
  markers: readonly ChapterMarker[];
  completedCycles: number;
  locale: Locale;
}): IntroductionDecision | null {
  const { chapter, cycle, markers, locale } = input;
  if (markers.some((m) => m.chapter === chapter && m.cycle === cycle)) return null;
  const index = CHAPTERS.indexOf(chapter);
  const earlierSeen = markers.some((m) => m.cycle === cycle && CHAPTERS.indexOf(m.chapter) < index);
  let kind: IntroductionKind;
  if (input.completedCycles >= 1 && cycle > 1) kind = 'replay';
  else if (index > 0 && !earlierSeen) kind = 'imported';
  else kind = 'first';
  return { kind, chapter, cycle, text: CHAPTER_SCENES[chapter][locale].introductions[kind] };
}

export type ReactionKind =
  | 'gift'
  | 'punch'
  | 'apology'
  | 'plant'
  | 'challenge'
  | 'challenge-won'
  | 'challenge-failed'
  | 'tin-invitation'
  | 'tin-bought'
  | 'tin-opened-sun'
  | 'tin-opened-empty'
  | 'defeat-aside';

/** Authored reactions: native receipts and dialogue that work without any AI call. */
export const REACTIONS: Readonly<Record<ReactionKind, Localized<string>>> = {
  gift: { en: 'For me? Fifty sun! I will treasure it. Probably.', 'zh-CN': '给我的？五十阳光！我会珍惜的，大概吧。', es: '¿Para mí? ¡Cincuenta soles! Lo guardaré con cariño. Probablemente.' },
  punch: { en: 'Bonk! Ow. Cartoon ow. Nothing broken, nothing lost.', 'zh-CN': '咚！哎哟，卡通式的哎哟。什么都没坏，什么都没少。', es: '¡Bonk! Ay. Un ay de dibujos animados. Nada roto, nada perdido.' },
  apology: { en: "Apology accepted. We're square.", 'zh-CN': '道歉收到，我们扯平了。', es: 'Disculpa aceptada. Estamos en paz.' },
  plant: { en: 'One Cherry Bomb, ready to use on this level only.', 'zh-CN': '一颗樱桃炸弹，仅限本关使用。', es: 'Una Cereza Bomba, lista para usar solo en este nivel.' },
  challenge: { en: 'No shovel until the next wave is cleared. Deal!', 'zh-CN': '下一波清完之前不许用铲子。一言为定！', es: 'Nada de pala hasta despejar la próxima oleada. ¡Trato hecho!' },
  'challenge-won': { en: 'Wave cleared, no digging. Here are your 75 sun!', 'zh-CN': '这一波清完了，没动铲子。给你75阳光！', es: 'Oleada despejada sin cavar. ¡Aquí tienes 75 soles!' },
  'challenge-failed': { en: 'You dug something up. The challenge is off.', 'zh-CN': '你挖掉了植物，挑战失败了。', es: 'Has desenterrado algo. El reto se acabó.' },
  'tin-invitation': {
    en: 'Psst. A suspicious tin, 25 sun. Could be 75 sun inside. Could be nothing.',
    'zh-CN': '嘘，一个可疑的罐子，25阳光。里面可能有75阳光，也可能什么都没有。',
    es: 'Psst. Una lata sospechosa, 25 soles. Puede tener 75 soles dentro. O nada.',
  },
  'tin-bought': { en: "It's yours. Sealed. Open it whenever you like on this level.", 'zh-CN': '归你了，密封着。本关内随时可以打开。', es: 'Es tuya. Sellada. Ábrela cuando quieras en este nivel.' },
  'tin-opened-sun': { en: '75 sun! Told you it might be worth it.', 'zh-CN': '75阳光！我就说可能值得。', es: '¡75 soles! Te dije que podía valer la pena.' },
  'tin-opened-empty': { en: 'Empty. Just the 25 sun you already knew about. Sorry.', 'zh-CN': '空的。只花了你早就知道的25阳光。抱歉。', es: 'Vacía. Solo los 25 soles que ya sabías. Lo siento.' },
  'defeat-aside': {
    en: "That one didn't go our way. And yes, I remember the tin. Next time.",
    'zh-CN': '这局没顺着我们来。是的，我记得那个罐子。下次吧。',
    es: 'Esa no salió bien. Y sí, me acuerdo de la lata. La próxima vez.',
  },
};

export function reaction(kind: ReactionKind, locale: Locale): string {
  return REACTIONS[kind][locale];
}

/** Suggested composer text for the complaint/thanks button: it only fills the composer. */
export const SUGGESTIONS: Readonly<Record<'complaint' | 'thanks', Localized<string>>> = {
  complaint: {
    en: 'That tin was empty. I want to talk about it.',
    'zh-CN': '那个罐子是空的，我想聊聊这件事。',
    es: 'Esa lata estaba vacía. Quiero hablar de ello.',
  },
  thanks: { en: 'Thanks for the help just now!', 'zh-CN': '刚才谢谢你的帮忙！', es: '¡Gracias por la ayuda de antes!' },
};

export function suggestedMessage(kind: 'complaint' | 'thanks', locale: Locale): string {
  return SUGGESTIONS[kind][locale];
}
