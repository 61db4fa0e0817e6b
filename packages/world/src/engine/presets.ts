/** The five optional official presets (§2.3), as complete world entries an author can add. */

export interface PresetEntry {
  id: string;
  name: string;
  content: string;
  role: 'system' | 'style' | 'custom';
  apiRole: 'system' | 'user';
  section: 'system-presets' | 'post-history';
  position: number;
  enabled: boolean;
  keywords: string[];
  conditions: [];
  conditionLogic: 'all';
  depth: null;
  matchWholeWords: boolean;
  secondaryKeywords: string[];
  secondaryKeywordLogic: 'AND_ANY';
  preventRecursion: boolean;
  excludeRecursion: boolean;
  tags: string[];
  folderId: null;
}

function preset(id: string, name: string, section: PresetEntry['section'], position: number, apiRole: PresetEntry['apiRole'], role: PresetEntry['role'], content: string): PresetEntry {
  return {
    id,
    name,
    content,
    role,
    apiRole,
    section,
    position,
    enabled: true,
    keywords: [],
    conditions: [],
    conditionLogic: 'all',
    depth: null,
    matchWholeWords: false,
    secondaryKeywords: [],
    secondaryKeywordLogic: 'AND_ANY',
    preventRecursion: false,
    excludeRecursion: false,
    tags: ['official-preset'],
    folderId: null,
  };
}

export const OFFICIAL_PRESET_IDS = ['preset-fiction-mode', 'preset-task', 'preset-instructions', 'preset-style', 'preset-post-history'] as const;

/** Fresh copies each call, so callers may edit them. */
export function officialPresets(): PresetEntry[] {
  return [
    preset(
      'preset-fiction-mode',
      'Fiction Mode',
      'system-presets',
      0,
      'system',
      'system',
      'This is a work of collaborative interactive fiction between {{user}} and you. You write as {{char}} and the world around {{user}}; {{user}} writes only for themselves.',
    ),
    preset(
      'preset-task',
      'Task',
      'system-presets',
      1,
      'system',
      'system',
      'Continue the story from the latest message of {{user}}. Keep characters consistent with the world entries and the current state of the game variables.',
    ),
    preset(
      'preset-instructions',
      'Instructions',
      'system-presets',
      2,
      'system',
      'system',
      'Never act or speak for {{user}}. When something in the story changes a game variable, write the matching directive in your reply, exactly in the syntax described, and only for variables that exist.',
    ),
    preset('preset-style', 'Style', 'system-presets', 3, 'system', 'style', 'Write vivid, concrete prose in the third person and past tense unless the world says otherwise. Vary sentence length; avoid repeating phrases from earlier replies.'),
    preset(
      'preset-post-history',
      'Post-History Instructions',
      'post-history',
      0,
      'user',
      'custom',
      '[Reply as {{char}} in one to four paragraphs. Put directives for changed variables at the end of the reply.]',
    ),
  ];
}
