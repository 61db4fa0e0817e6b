import type { CharacterSheet, SheetLore } from '@yumina/world';
import { type ReactNode, useEffect, useId } from 'react';
import { Link, navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';
import { ListInput } from './fields.tsx';
import { PortraitField } from './PortraitField.tsx';
import { type SheetField, type SheetIssue, useCharacter } from './use-character.ts';
import './studio.css';
import { shortDateTime } from '../lib/dates.ts';

/**
 * The page of `/studio/new/character` and `/studio/<id>/character`: a chunk of its own (routes.tsx),
 * so opening it loads neither the full studio nor its code editor. Signed-in authors only.
 */
export function CharacterEditorPage({ path }: { path: string }) {
  const rest = path.slice('/studio/'.length).replace(/\/character\/?$/, '');
  const worldId = rest === 'new' ? null : decodeURIComponent(rest);
  const { loading, info } = useSession();
  useEffect(() => {
    if (!loading && !info?.account) navigate(`/login?returnTo=${encodeURIComponent(path)}`);
  }, [loading, info, path]);
  if (loading || !info?.account) return <p>Loading…</p>;
  return <CharacterEditor key={worldId ?? 'new'} worldId={worldId} author={info.account.displayName} />;
}

/**
 * `/studio/new/character` and `/studio/<id>/character` (issue 30 D): a world as a character, the
 * way character-chat sites and SillyTavern's card editor show one — name, portrait, greeting and
 * alternate greetings, description, personality, scenario, example dialogue, lore entries with
 * their keywords, tags — then Play. No ids, sections or JSON: the card mapping of @yumina/world
 * derives them (use-character.ts), and the full studio still shows them.
 */
export function CharacterEditor({ worldId, author }: { worldId: string | null; author: string }) {
  const c = useCharacter(worldId, author);
  useTitle(['Character editor', c.sheet ? c.sheet.name.trim() || 'New character' : null]);
  const savedId = c.server?.id ?? null;
  // A new character, once saved, has its own address (a reload opens it, not a blank one).
  useEffect(() => {
    if (!worldId && savedId) window.history.replaceState(window.history.state, '', `/studio/${encodeURIComponent(savedId)}/character`);
  }, [worldId, savedId]);

  if (c.loadError) return <p role="alert">{c.loadError}</p>;
  if (!c.sheet) return <p>Loading…</p>;
  const sheet = c.sheet;
  const set = <K extends keyof CharacterSheet>(key: K, value: CharacterSheet[K]) => c.setSheet({ ...sheet, [key]: value });
  const issuesOf = (field: SheetField) => c.issues.filter((issue) => issue.field === field);
  const play = async () => {
    const id = await c.save();
    if (id) navigate(`/play/${encodeURIComponent(id)}`);
  };

  return (
    <div className="character-editor">
      <header className="character-head">
        <h1>{sheet.name.trim() || 'New character'}</h1>
        <p className="hint">
          Who your character is, in plain words. Write <code>{'{{char}}'}</code> for the character&apos;s name and <code>{'{{user}}'}</code> for the player&apos;s. Variables, rules and a custom
          interface are in the <Link to={savedId ? `/studio/${encodeURIComponent(savedId)}` : '/studio/new'}>full studio</Link>.
        </p>
      </header>
      {c.restoredAt && (
        <p className="hint" data-testid="draft-restored">
          Restored your unsaved edits from {shortDateTime(c.restoredAt)}.{' '}
          <button type="button" className="link" onClick={c.discardDraft}>
            Discard them
          </button>
        </p>
      )}
      <div className="character-grid">
        <section className="card character-card" aria-labelledby="character-identity">
          <h2 id="character-identity" className="visually-hidden">
            Identity
          </h2>
          <TextField label="Name" value={sheet.name} maxLength={200} issues={issuesOf('name')} onChange={(v) => set('name', v)} required />
          <PortraitField src={c.portrait} name={sheet.name} busy={c.busy} onFile={c.choosePortrait} onRemove={c.hasPortraitToRemove ? () => void c.removePortrait() : undefined} />
          <TextField label="Tagline" hint="One line for the library card." value={sheet.tagline} maxLength={10_000} issues={issuesOf('tagline')} onChange={(v) => set('tagline', v)} />
          <Labelled label="Tags" hint="Comma-separated, for the library's search." issues={issuesOf('tags')}>
            {(id) => <ListInput value={sheet.tags} path={id} label="Tags" placeholder="romance, slice of life" onChange={(tags) => set('tags', tags)} />}
          </Labelled>
        </section>
        <div className="character-main">
          <section className="card" aria-labelledby="character-who">
            <h2 id="character-who">Who they are</h2>
            <TextField label="Description" hint="Appearance, background, what they want. The model reads this every turn." rows={6} value={sheet.description} issues={issuesOf('description')} onChange={(v) => set('description', v)} />
            <TextField label="Personality" hint="How they talk and behave." rows={3} value={sheet.personality} issues={issuesOf('personality')} onChange={(v) => set('personality', v)} />
            <TextField label="Scenario" hint="Where and when the story starts, and how {{user}} fits in." rows={3} value={sheet.scenario} issues={issuesOf('scenario')} onChange={(v) => set('scenario', v)} />
          </section>
          <Greetings greetings={sheet.greetings} issues={issuesOf('greetings')} onChange={(greetings) => set('greetings', greetings)} />
          <section className="card" aria-labelledby="character-examples">
            <h2 id="character-examples">How they speak</h2>
            <TextField
              label="Example dialogue"
              hint="A few lines in their voice: {{user}}: and {{char}}: at the start of each line, <START> between exchanges. Shows the model how they speak."
              rows={6}
              value={sheet.exampleDialogue}
              placeholder={'<START>\n{{user}}: Do you ever close early?\n{{char}}: Only when someone gives me a reason.'}
              issues={issuesOf('exampleDialogue')}
              onChange={(v) => set('exampleDialogue', v)}
            />
          </section>
          <Lore lore={sheet.lore} issues={issuesOf('lore')} onChange={(lore) => set('lore', lore)} />
          {issuesOf('other').length > 0 && (
            <ul className="field-issues" role="alert">
              {issuesOf('other').map((issue) => (
                <li key={issue.message}>{issue.message}</li>
              ))}
            </ul>
          )}
        </div>
      </div>
      <div className="character-actions" role="toolbar" aria-label="Character">
        <p className={c.message?.ok === false ? 'error' : 'hint'} role={c.message?.ok === false ? 'alert' : 'status'} data-testid="character-message">
          {c.message?.text ?? (c.issues.length > 0 ? c.issues[0]!.message : c.dirty ? 'Unsaved changes (kept in this browser).' : 'All changes saved.')}
        </p>
        {savedId && (
          <Link to={`/studio/${encodeURIComponent(savedId)}`} className="button secondary">
            Full studio
          </Link>
        )}
        <button type="button" className="secondary" disabled={c.busy || c.issues.length > 0 || !c.dirty} onClick={() => void c.save()}>
          {c.busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" disabled={c.busy || c.issues.length > 0} onClick={() => void play()}>
          Play
        </button>
      </div>
    </div>
  );
}

/** The issues of one field, beside it. */
function Issues({ issues, id }: { issues: SheetIssue[]; id: string }) {
  if (issues.length === 0) return null;
  return (
    <span className="field-issue" id={id}>
      {issues.map((issue) => issue.message).join('; ')}
    </span>
  );
}

function Labelled({ label, hint, issues, children }: { label: string; hint?: string; issues: SheetIssue[]; children: (id: string) => ReactNode }) {
  const id = useId();
  return (
    <div className="labelled">
      <span>{label}</span>
      {children(id)}
      {hint && <span className="hint">{hint}</span>}
      <Issues issues={issues} id={`${id}-issues`} />
    </div>
  );
}

/** The hint and issues that describe a field (only those shown). */
const describedBy = (id: string, props: { hint?: string; issues: SheetIssue[] }) =>
  [props.hint ? `${id}-hint` : '', props.issues.length > 0 ? `${id}-issues` : ''].filter(Boolean).join(' ') || undefined;

/** A labelled input, or a textarea when it has rows, with its hint and issues. */
function TextField(props: { label: string; hint?: string; rows?: number; value: string; placeholder?: string; maxLength?: number; required?: boolean; issues: SheetIssue[]; onChange(value: string): void }) {
  const id = useId();
  const common = {
    id,
    value: props.value,
    placeholder: props.placeholder,
    maxLength: props.maxLength,
    required: props.required,
    'aria-invalid': props.issues.length > 0,
    'aria-describedby': describedBy(id, props),
  };
  return (
    <div className="labelled">
      <label htmlFor={id}>{props.label}</label>
      {props.rows === undefined ? (
        <input {...common} onChange={(e) => props.onChange(e.target.value)} />
      ) : (
        <textarea {...common} rows={props.rows} onChange={(e) => props.onChange(e.target.value)} />
      )}
      {props.hint && (
        <span className="hint" id={`${id}-hint`}>
          {props.hint}
        </span>
      )}
      <Issues issues={props.issues} id={`${id}-issues`} />
    </div>
  );
}

/** The greeting (the chat's first message) and the alternates a player can swipe to. */
function Greetings({ greetings, issues, onChange }: { greetings: string[]; issues: SheetIssue[]; onChange(next: string[]): void }) {
  const list = greetings.length > 0 ? greetings : [''];
  const replace = (index: number, value: string) => onChange(list.map((g, i) => (i === index ? value : g)));
  return (
    <section className="card" aria-labelledby="character-greetings">
      <h2 id="character-greetings">Greetings</h2>
      <TextField label="Greeting" hint="Their first message: it opens every new chat." rows={4} value={list[0]!} issues={issues} onChange={(v) => replace(0, v)} />
      {list.slice(1).map((greeting, i) => (
        <div key={i} className="character-item">
          <TextField label={`Alternate greeting ${i + 1}`} rows={3} value={greeting} issues={[]} onChange={(v) => replace(i + 1, v)} />
          <button type="button" className="link" aria-label={`Remove alternate greeting ${i + 1}`} onClick={() => onChange(list.filter((_, j) => j !== i + 1))}>
            Remove
          </button>
        </div>
      ))}
      <p className="hint">Alternate greetings open the chat another way: the player swipes between them.</p>
      <button type="button" className="secondary" onClick={() => onChange([...list, ''])}>
        Add an alternate greeting
      </button>
    </section>
  );
}

/** Lore: what the model is told only when one of its keywords comes up in the chat. */
function Lore({ lore, issues, onChange }: { lore: SheetLore[]; issues: SheetIssue[]; onChange(next: SheetLore[]): void }) {
  const replace = (index: number, next: SheetLore) => onChange(lore.map((entry, i) => (i === index ? next : entry)));
  return (
    <section className="card" aria-labelledby="character-lore">
      <h2 id="character-lore">Lore</h2>
      <p className="hint">Facts the model gets only when one of their keywords comes up in the chat: places, people, secrets.</p>
      {lore.map((entry, i) => {
        const title = entry.name.trim() || `Lore entry ${i + 1}`;
        return (
          <fieldset key={entry.id ?? `new-${i}`} className="character-item" aria-label={`Lore entry ${i + 1}`}>
            <legend>{title}</legend>
            <label className="labelled">
              Name
              <input aria-label={`Lore entry ${i + 1} name`} maxLength={200} value={entry.name} onChange={(e) => replace(i, { ...entry, name: e.target.value })} />
            </label>
            <div className="labelled">
              <span>Keywords (comma-separated)</span>
              <ListInput value={entry.keywords} path={`lore-${i}-keywords`} label={`Lore entry ${i + 1} keywords`} placeholder="cafe, coffee" onChange={(keywords) => replace(i, { ...entry, keywords })} />
            </div>
            <label className="labelled">
              What the model learns
              <textarea aria-label={`Lore entry ${i + 1} text`} rows={3} value={entry.content} onChange={(e) => replace(i, { ...entry, content: e.target.value })} />
            </label>
            <button type="button" className="link" aria-label={`Remove ${title}`} onClick={() => onChange(lore.filter((_, j) => j !== i))}>
              Remove
            </button>
          </fieldset>
        );
      })}
      {issues.length > 0 && (
        <p className="field-issue" role="alert">
          {issues.map((issue) => issue.message).join('; ')}
        </p>
      )}
      <button type="button" className="secondary" onClick={() => onChange([...lore, { id: null, name: '', keywords: [], content: '' }])}>
        Add a lore entry
      </button>
    </section>
  );
}
