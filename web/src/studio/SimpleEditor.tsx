import {
  AUDIO_TRACK_TYPES,
  CONDITION_LOGICS,
  CONDITION_OPERATORS,
  CONDITIONAL_BGM_TRIGGERS,
  ENTRY_API_ROLES,
  ENTRY_ROLES,
  ENTRY_SECTIONS,
  INJECT_POSITIONS,
  NOTIFY_STYLES,
  PLAY_AUDIO_ACTIONS,
  PLAYLIST_MODES,
  RULE_ACTION_TYPES,
  RULE_TRIGGER_TYPES,
  SECONDARY_KEYWORD_LOGICS,
  VARIABLE_OPERATIONS,
  VARIABLE_TYPES,
} from '@yumina/world';
import { type FieldSpec, Fields, ItemList, type Obj } from './fields.tsx';
import { PromptCacheEstimate } from './PromptCacheEstimate.tsx';

const conditionFields: FieldSpec[] = [
  { key: 'variableId', label: 'Variable', kind: 'text' },
  { key: 'operator', label: 'Operator', kind: 'select', options: CONDITION_OPERATORS },
  { key: 'value', label: 'Value (JSON)', kind: 'json' },
];
const conditions = (label = 'Conditions'): FieldSpec => ({
  key: 'conditions',
  label,
  kind: 'array',
  item: () => conditionFields,
  create: () => ({ variableId: '', operator: 'eq', value: 0 }),
  itemLabel: (_c, i) => `Condition ${i + 1}`,
});
const conditionLogic: FieldSpec = { key: 'conditionLogic', label: 'Condition logic', kind: 'select', options: CONDITION_LOGICS };

const settingsFields: FieldSpec[] = [
  { key: 'playerName', label: 'Player name', kind: 'text' },
  { key: 'temperature', label: 'Temperature', kind: 'optional-number' },
  { key: 'maxTokens', label: 'Max tokens per reply', kind: 'optional-number' },
  { key: 'maxContext', label: 'Context window', kind: 'optional-number' },
  { key: 'topP', label: 'Top P', kind: 'optional-number' },
  { key: 'topK', label: 'Top K', kind: 'optional-number' },
  { key: 'minP', label: 'Min P', kind: 'optional-number' },
  { key: 'frequencyPenalty', label: 'Frequency penalty', kind: 'optional-number' },
  { key: 'presencePenalty', label: 'Presence penalty', kind: 'optional-number' },
  { key: 'lorebookScanDepth', label: 'Lorebook scan depth', kind: 'optional-number' },
  { key: 'lorebookRecursionDepth', label: 'Lorebook recursion depth', kind: 'optional-number' },
  { key: 'structuredOutput', label: 'Structured (JSON) output', kind: 'checkbox' },
  { key: 'cacheFriendlyPlacement', label: 'Cache-friendly lorebook placement', kind: 'checkbox' },
];

const entryFields = (folders: string[]): FieldSpec[] => [
  { key: 'id', label: 'Entry id', kind: 'text' },
  { key: 'name', label: 'Entry name', kind: 'text' },
  { key: 'section', label: 'Section', kind: 'select', options: ENTRY_SECTIONS },
  { key: 'role', label: 'Role', kind: 'select', options: ENTRY_ROLES },
  { key: 'apiRole', label: 'Message role', kind: 'select', options: ENTRY_API_ROLES },
  { key: 'content', label: 'Content', kind: 'textarea' },
  { key: 'keywords', label: 'Keywords (comma-separated)', kind: 'list' },
  { key: 'secondaryKeywords', label: 'Secondary keywords (comma-separated)', kind: 'list' },
  { key: 'secondaryKeywordLogic', label: 'Secondary keyword logic', kind: 'select', options: SECONDARY_KEYWORD_LOGICS },
  { key: 'matchWholeWords', label: 'Match whole words', kind: 'checkbox' },
  conditions(),
  conditionLogic,
  { key: 'folderId', label: 'Folder', kind: 'select', options: folders, optional: true },
  { key: 'tags', label: 'Tags (comma-separated)', kind: 'list' },
  { key: 'position', label: 'Position', kind: 'optional-number' },
  { key: 'depth', label: 'Depth (chat history)', kind: 'nullable-number' },
  { key: 'enabled', label: 'Enabled', kind: 'checkbox' },
  { key: 'preventRecursion', label: 'Prevent recursion', kind: 'checkbox' },
  { key: 'excludeRecursion', label: 'Exclude recursion', kind: 'checkbox' },
];

const variableFields = (v: Obj): FieldSpec[] => [
  { key: 'id', label: 'Variable id', kind: 'text' },
  { key: 'name', label: 'Variable name', kind: 'text' },
  { key: 'type', label: 'Type', kind: 'select', options: VARIABLE_TYPES },
  { key: 'defaultValue', label: 'Default value (JSON)', kind: 'json' },
  ...(v.type === 'number'
    ? ([
        { key: 'min', label: 'Minimum', kind: 'optional-number' },
        { key: 'max', label: 'Maximum', kind: 'optional-number' },
      ] as FieldSpec[])
    : []),
  { key: 'description', label: 'Description', kind: 'text' },
  { key: 'behaviorRules', label: 'Behavior rules (for the AI)', kind: 'textarea' },
];

function triggerFields(t: Obj): FieldSpec[] {
  const type: FieldSpec = { key: 'type', label: 'Trigger type', kind: 'select', options: RULE_TRIGGER_TYPES };
  switch (t.type) {
    case 'variable-crossed':
      return [
        type,
        { key: 'variableId', label: 'Trigger variable', kind: 'text' },
        { key: 'direction', label: 'Direction', kind: 'select', options: ['rises-above', 'drops-below'] },
        { key: 'threshold', label: 'Threshold', kind: 'number' },
      ];
    case 'state-change':
      return [type, { key: 'variableId', label: 'Trigger variable (optional)', kind: 'text' }];
    case 'turn-count':
      return [type, { key: 'atTurn', label: 'At turn', kind: 'optional-number' }, { key: 'everyNTurns', label: 'Every N turns', kind: 'optional-number' }];
    case 'keyword':
    case 'ai-keyword':
      return [type, { key: 'keywords', label: 'Trigger keywords (comma-separated)', kind: 'list' }, { key: 'matchWholeWords', label: 'Match whole words', kind: 'checkbox' }];
    case 'action':
      return [type, { key: 'actionId', label: 'Action id', kind: 'text' }];
    default:
      return [type];
  }
}

function actionFields(a: Obj): FieldSpec[] {
  const type: FieldSpec = { key: 'type', label: 'Action type', kind: 'select', options: RULE_ACTION_TYPES };
  switch (a.type) {
    case 'modify-variable':
      return [
        type,
        { key: 'variableId', label: 'Action variable', kind: 'text' },
        { key: 'operation', label: 'Operation', kind: 'select', options: VARIABLE_OPERATIONS },
        { key: 'value', label: 'Action value (JSON)', kind: 'json' },
      ];
    case 'inject-directive':
      return [
        type,
        { key: 'directiveId', label: 'Directive id', kind: 'text' },
        { key: 'content', label: 'Directive content', kind: 'textarea' },
        { key: 'position', label: 'Position', kind: 'select', options: INJECT_POSITIONS },
        { key: 'persistent', label: 'Persistent', kind: 'checkbox' },
        { key: 'duration', label: 'Duration (turns)', kind: 'nullable-number' },
      ];
    case 'remove-directive':
      return [type, { key: 'directiveId', label: 'Directive id', kind: 'text' }];
    case 'notify-player':
      return [type, { key: 'style', label: 'Style', kind: 'select', options: NOTIFY_STYLES }, { key: 'message', label: 'Message', kind: 'text' }];
    case 'play-audio':
      return [type, { key: 'trackId', label: 'Track id', kind: 'text' }, { key: 'action', label: 'Audio action', kind: 'select', options: PLAY_AUDIO_ACTIONS }];
    case 'toggle-entry':
      return [type, { key: 'entryId', label: 'Entry id', kind: 'text' }, { key: 'enabled', label: 'Enable', kind: 'checkbox' }];
    case 'toggle-rule':
      return [type, { key: 'ruleId', label: 'Rule id', kind: 'text' }, { key: 'enabled', label: 'Enable', kind: 'checkbox' }];
    case 'fire-rule':
      return [type, { key: 'ruleId', label: 'Rule id', kind: 'text' }];
    case 'send-context':
      return [type, { key: 'message', label: 'Message', kind: 'textarea' }, { key: 'role', label: 'Role', kind: 'select', options: ['system', 'user'] }];
    default:
      return [type];
  }
}

const ruleFields: FieldSpec[] = [
  { key: 'id', label: 'Rule id', kind: 'text' },
  { key: 'name', label: 'Rule name', kind: 'text' },
  { key: 'description', label: 'Description', kind: 'text' },
  { key: 'trigger', label: 'Trigger', kind: 'object', fields: triggerFields },
  conditions(),
  conditionLogic,
  { key: 'actions', label: 'Actions', kind: 'array', item: actionFields, create: () => ({ type: 'notify-player', style: 'info', message: '' }), itemLabel: (_a, i) => `Action ${i + 1}` },
  { key: 'priority', label: 'Priority', kind: 'optional-number' },
  { key: 'cooldownTurns', label: 'Cooldown (turns)', kind: 'nullable-number' },
  { key: 'maxFireCount', label: 'Max fire count', kind: 'nullable-number' },
  { key: 'enabled', label: 'Enabled', kind: 'checkbox' },
];

const effectFields = (e: Obj): FieldSpec[] =>
  e.type === 'emit'
    ? [{ key: 'type', label: 'Effect type', kind: 'select', options: ['set', 'emit'] }, { key: 'event', label: 'Event (JSON, with a type)', kind: 'json' }]
    : [
        { key: 'type', label: 'Effect type', kind: 'select', options: ['set', 'emit'] },
        { key: 'path', label: 'Path (variable id or @audio.bgm, @ui.notification…)', kind: 'text' },
        { key: 'value', label: 'Value (JSON)', kind: 'json' },
        { key: 'operation', label: 'Operation', kind: 'select', options: VARIABLE_OPERATIONS, optional: true },
      ];

const reactionFields: FieldSpec[] = [
  { key: 'id', label: 'Reaction id', kind: 'text' },
  { key: 'name', label: 'Reaction name', kind: 'text' },
  { key: 'when', label: 'When', kind: 'object', fields: () => [{ key: 'eventType', label: 'Event type (message:user, turn:complete, state:changed…)', kind: 'text' }] },
  conditions(),
  conditionLogic,
  { key: 'then', label: 'Effects', kind: 'array', item: effectFields, create: () => ({ type: 'set', path: '', value: '' }), itemLabel: (_e, i) => `Effect ${i + 1}` },
];

const trackFields: FieldSpec[] = [
  { key: 'id', label: 'Track id', kind: 'text' },
  { key: 'name', label: 'Track name', kind: 'text' },
  { key: 'type', label: 'Track type', kind: 'select', options: AUDIO_TRACK_TYPES },
  { key: 'url', label: 'URL or asset://reference', kind: 'text' },
  { key: 'loop', label: 'Loop', kind: 'checkbox' },
  { key: 'volume', label: 'Volume (0–1)', kind: 'optional-number' },
  { key: 'fadeIn', label: 'Fade in (s)', kind: 'nullable-number' },
  { key: 'fadeOut', label: 'Fade out (s)', kind: 'nullable-number' },
  { key: 'maxDuration', label: 'Max duration (s)', kind: 'nullable-number' },
];

const playlistFields: FieldSpec[] = [
  { key: 'tracks', label: 'Playlist track ids (comma-separated)', kind: 'list' },
  { key: 'playMode', label: 'Play mode', kind: 'select', options: PLAYLIST_MODES },
  { key: 'gapSeconds', label: 'Gap (s, max 30)', kind: 'optional-number' },
  { key: 'autoPlay', label: 'Auto play', kind: 'checkbox' },
  { key: 'waitForFirstMessage', label: 'Wait for the first message', kind: 'checkbox' },
];

const conditionalBgmFields: FieldSpec[] = [
  { key: 'id', label: 'Music rule id', kind: 'text' },
  { key: 'name', label: 'Music rule name', kind: 'text' },
  { key: 'targetTrackId', label: 'Track id', kind: 'text' },
  { key: 'triggerType', label: 'Trigger', kind: 'select', options: CONDITIONAL_BGM_TRIGGERS },
  conditions(),
  conditionLogic,
  { key: 'keywords', label: 'Keywords (comma-separated)', kind: 'list' },
  { key: 'atTurn', label: 'At turn', kind: 'nullable-number' },
  { key: 'everyNTurns', label: 'Every N turns', kind: 'nullable-number' },
  { key: 'priority', label: 'Priority', kind: 'optional-number' },
  { key: 'fadeInDuration', label: 'Fade in (s)', kind: 'nullable-number' },
  { key: 'fadeOutDuration', label: 'Fade out (s)', kind: 'nullable-number' },
  { key: 'stopPreviousBGM', label: 'Stop previous music', kind: 'checkbox' },
  { key: 'fallback', label: 'Fallback (default, previous or a track id)', kind: 'text' },
];

export const TAG_COLORS = ['bg-slate-500', 'bg-red-500', 'bg-orange-500', 'bg-amber-500', 'bg-green-500', 'bg-teal-500', 'bg-sky-500', 'bg-indigo-500', 'bg-purple-500', 'bg-pink-500'];

/** The studio's sections, in sidebar order; the form ones are drawn here, the others by the studio. */
export const STUDIO_SECTIONS = [
  ['basics', 'Basics'],
  ['entries', 'Entries'],
  ['variables', 'Variables'],
  ['rules', 'Rules'],
  ['reactions', 'Reactions'],
  ['audio', 'Audio'],
  ['interface', 'Interface'],
  ['tags', 'Cover and tags'],
  ['settings', 'Settings'],
  ['assistant', 'Assistant'],
  ['playtest', 'Playtest'],
] as const;
export type StudioSection = (typeof STUDIO_SECTIONS)[number][0];

/** The section that holds a validator path (for "show me" links and inline issues). */
export function sectionOf(path: string): StudioSection {
  const head = /^[A-Za-z]+/.exec(path)?.[0] ?? '';
  if (head === 'entries' || head === 'entryFolders') return 'entries';
  if (head === 'variables') return 'variables';
  if (head === 'rules') return 'rules';
  if (head === 'reactions') return 'reactions';
  if (head === 'audioTracks' || head === 'bgmPlaylist' || head === 'conditionalBGM') return 'audio';
  if (head === 'rootComponent' || head === 'components' || head === 'customUI') return 'interface';
  if (head === 'customTags' || head === 'customTagColors') return 'tags';
  if (head === 'settings') return 'settings';
  return 'basics';
}

const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/**
 * An entry whose role becomes `greeting` moves where greetings go, as the card importer puts them:
 * the chat history, sent as the character's (assistant) message, with no keywords (a greeting
 * opens the chat; it is never a triggered entry).
 */
export function placeGreetings(before: unknown[], after: unknown[]): unknown[] {
  return after.map((item, i) => {
    // Moved, added or untouched entries are the same objects; an edited one replaces its old self in place.
    if (before.includes(item)) return item;
    const entry = item as Obj;
    const was = before[i] as Obj | undefined;
    if (entry?.role !== 'greeting' || was?.role === 'greeting') return item;
    return { ...entry, section: 'chat-history', apiRole: 'assistant', keywords: [] };
  });
}
const str = (v: unknown, fallback: string) => (typeof v === 'string' && v ? v : fallback);

/** The simple mode: the form of one section of the world (the studio's sidebar picks it). */
export function SimpleEditor({ world, onChange, section }: { world: Obj; onChange(next: Obj): void; section: StudioSection }) {
  const set = (key: string, value: unknown) => onChange({ ...world, [key]: value });
  const folders = arr(world.entryFolders).map((f) => String((f as Obj).id ?? '')).filter(Boolean);
  const entries = arr(world.entries);
  // Entries are shown by section; paths keep their stored index.
  const entryOrder = entries
    .map((e, i) => [ENTRY_SECTIONS.indexOf(((e as Obj).section as (typeof ENTRY_SECTIONS)[number]) ?? 'system-presets'), i] as const)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([, i]) => i);
  const tags = arr(world.customTags).map(String);
  const colors = (world.customTagColors && typeof world.customTagColors === 'object' ? world.customTagColors : {}) as Record<string, string>;
  return (
    <div className="simple-editor">
      {section === 'basics' && (
        <section id="studio-basics" className="card">
        <h3>Basics</h3>
        <Fields
          value={world}
          path=""
          onChange={onChange}
          specs={[
            { key: 'name', label: 'Name', kind: 'text' },
            { key: 'description', label: 'Description', kind: 'textarea' },
            { key: 'author', label: 'Author name', kind: 'text' },
            { key: 'language', label: 'Language (BCP 47, e.g. en, zh-Hans)', kind: 'text' },
          ]}
        />
      </section>
      )}
      {section === 'entries' && (
        <section id="studio-entries" className="card">
        <h3>Entries</h3>
        <ItemList
          label="Folders"
          items={arr(world.entryFolders)}
          path="entryFolders"
          item={() => [
            { key: 'id', label: 'Folder id', kind: 'text' },
            { key: 'name', label: 'Folder name', kind: 'text' },
          ]}
          create={() => ({ id: `folder-${arr(world.entryFolders).length + 1}`, name: 'New folder' })}
          itemLabel={(f, i) => `Folder ${str(f.name, String(i + 1))}`}
          onChange={(items) => set('entryFolders', items)}
        />
        <ItemList
          label="Entries"
          items={entries}
          order={entryOrder}
          path="entries"
          item={() => entryFields(folders)}
          create={() => ({ id: `entry-${entries.length + 1}`, name: 'New entry', content: '', section: 'system-presets', keywords: [], enabled: true })}
          itemLabel={(e, i) => `Entry ${i + 1} (${str(e.section, 'no section')})`}
          onChange={(items) => set('entries', placeGreetings(entries, items))}
        />
      </section>
      )}
      {section === 'variables' && (
        <section id="studio-variables" className="card">
        <h3>Variables</h3>
        <ItemList
          label="Variables"
          items={arr(world.variables)}
          path="variables"
          item={variableFields}
          create={() => ({ id: `variable-${arr(world.variables).length + 1}`, name: 'New variable', type: 'number', defaultValue: 0 })}
          itemLabel={(_v, i) => `Variable ${i + 1}`}
          onChange={(items) => set('variables', items)}
        />
      </section>
      )}
      {section === 'rules' && (
        <section id="studio-rules" className="card">
        <h3>Rules</h3>
        <ItemList
          label="Rules"
          items={arr(world.rules)}
          path="rules"
          item={() => ruleFields}
          create={() => ({ id: `rule-${arr(world.rules).length + 1}`, name: 'New rule', trigger: { type: 'every-turn' }, conditions: [], actions: [] })}
          itemLabel={(_r, i) => `Rule ${i + 1}`}
          onChange={(items) => set('rules', items)}
        />
      </section>
      )}
      {section === 'reactions' && (
        <section id="studio-reactions" className="card">
        <h3>Reactions</h3>
        <ItemList
          label="Reactions"
          items={arr(world.reactions)}
          path="reactions"
          item={() => reactionFields}
          // Note: the seed (§2.7) names a reaction's effect list `then`
          create={() => ({ id: `reaction-${arr(world.reactions).length + 1}`, name: 'New reaction', when: { eventType: 'turn:complete' }, conditions: [], then: [] })}
          itemLabel={(_r, i) => `Reaction ${i + 1}`}
          onChange={(items) => set('reactions', items)}
        />
      </section>
      )}
      {section === 'audio' && (
        <section id="studio-audio" className="card">
        <h3>Audio</h3>
        <ItemList
          label="Tracks"
          items={arr(world.audioTracks)}
          path="audioTracks"
          item={() => trackFields}
          create={() => ({ id: `track-${arr(world.audioTracks).length + 1}`, name: 'New track', type: 'bgm', url: '', loop: true, volume: 1 })}
          itemLabel={(_t, i) => `Track ${i + 1}`}
          onChange={(items) => set('audioTracks', items)}
        />
        <Fields
          value={world}
          path=""
          onChange={onChange}
          specs={[
            { key: 'bgmPlaylist', label: 'Playlist', kind: 'object', nullable: true, fields: () => playlistFields, create: () => ({ tracks: [], playMode: 'loop', gapSeconds: 0, autoPlay: true, waitForFirstMessage: false }) },
          ]}
        />
        <ItemList
          label="Conditional music"
          items={arr(world.conditionalBGM)}
          path="conditionalBGM"
          item={() => conditionalBgmFields}
          create={() => ({ id: `music-${arr(world.conditionalBGM).length + 1}`, name: 'New music rule', targetTrackId: '', triggerType: 'session-start' })}
          itemLabel={(_c, i) => `Music rule ${i + 1}`}
          onChange={(items) => set('conditionalBGM', items)}
        />
      </section>
      )}
      {section === 'tags' && (
        <section id="studio-tags" className="card">
        <h3>Custom tags</h3>
        <ul className="list" data-path="customTags">
          {tags.map((tag, i) => (
            // Note: tags may repeat while being typed
            <li key={`${tag}-${i}`} className="row" data-path={`customTags[${i}]`}>
              <input aria-label={`Tag ${i + 1}`} value={tag} onChange={(e) => set('customTags', tags.map((t, j) => (j === i ? e.target.value : t)))} />
              <select
                aria-label={`Colour of tag ${i + 1}`}
                data-path={`customTagColors.${tag}`}
                value={colors[tag] ?? ''}
                onChange={(e) => {
                  const next = { ...colors };
                  if (e.target.value) next[tag] = e.target.value;
                  else delete next[tag];
                  set('customTagColors', next);
                }}
              >
                <option value="">no colour</option>
                {TAG_COLORS.map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
              <span className={`tag-swatch ${colors[tag] ?? ''}`} />
              <button type="button" className="link" onClick={() => set('customTags', tags.filter((_, j) => j !== i))}>
                Remove
              </button>
            </li>
          ))}
        </ul>
        <button type="button" className="secondary" onClick={() => set('customTags', [...tags, `tag-${tags.length + 1}`])}>
          Add tag
        </button>
      </section>
      )}
      {section === 'settings' && (
        <section id="studio-settings" className="card">
        <h3>Settings</h3>
        <Fields value={world} path="" onChange={onChange} specs={[{ key: 'settings', label: 'Model settings', kind: 'object', fields: () => settingsFields }]} />
        <PromptCacheEstimate world={world} />
      </section>
      )}
    </div>
  );
}
