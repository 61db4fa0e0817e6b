import { type CharacterCandidate, characterName, validateWorld, WORLD_SCHEMA_VERSION } from '@yumina/world';
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, navigate } from '../lib/router.tsx';
import { useTitle } from '../lib/title.ts';
import { useSession } from '../lib/session.tsx';
import { AssetsPanel } from './AssetsPanel.tsx';
import { AssistantPanel } from './AssistantPanel.tsx';
import { CardExportDialog } from './CardExportDialog.tsx';
import { ConflictView } from './ConflictView.tsx';
import { clearDraft, readDraft, writeDraft } from './draft.ts';
import { ImportDialog } from './ImportDialog.tsx';
import { Overview } from './Overview.tsx';
import { CoverPicker } from './CoverPicker.tsx';
import { PortraitPicker } from './PortraitField.tsx';
import { IssuesContext } from './fields.tsx';
import { InterfaceSection } from './InterfaceSection.tsx';
import { Playtest } from './Playtest.tsx';
import { SimpleEditor, STUDIO_SECTIONS, type StudioSection, sectionOf } from './SimpleEditor.tsx';
import { type Issue, type ServerWorld, send } from './server.ts';
import './studio.css';
import { shortDateTime } from '../lib/dates.ts';
import { count } from '../lib/text.ts';

type Obj = Record<string, unknown>;

export function blankWorld(author: string): Obj {
  return { version: WORLD_SCHEMA_VERSION, name: 'Untitled world', description: '', author, entries: [], variables: [], rules: [], editorMode: 'simple' };
}

const pretty = (world: Obj) => JSON.stringify(world, null, 2);
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** `/studio/new` and `/studio/<worldId>` (the character editor of the same world, `…/character`, is a page of its own: CharacterEditor.tsx). */
export function StudioPage({ path }: { path: string }) {
  const rest = path.slice('/studio/'.length).replace(/\/$/, '');
  const worldId = rest === 'new' || rest === '' ? null : decodeURIComponent(rest);
  const { loading, info } = useSession();
  useEffect(() => {
    if (!loading && !info?.account) navigate(`/login?returnTo=${encodeURIComponent(path)}`);
  }, [loading, info, path]);
  if (loading || !info?.account) return <p>Loading…</p>;
  return <Studio key={worldId ?? 'new'} worldId={worldId} author={info.account.displayName} />;
}

/** Finds the field of an issue's path in simple mode (or its nearest enclosing one). */
function fieldFor(path: string): HTMLElement | null {
  let p = path;
  for (;;) {
    const el = document.querySelector<HTMLElement>(`.simple-editor [data-path="${CSS.escape(p)}"]`);
    if (el) return el;
    const shorter = p.replace(/(\[\d+\]|\.[^.[\]]+|^[^.[\]]+)$/, '');
    if (shorter === p || shorter === '') return document.querySelector<HTMLElement>('.simple-editor');
    p = shorter;
  }
}

function Studio({ worldId, author }: { worldId: string | null; author: string }) {
  const [server, setServer] = useState<ServerWorld | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [draft, setDraft] = useState<Obj | null>(null);
  const [text, setText] = useState<string | null>(null);
  const [baseRevision, setBaseRevision] = useState<number | null>(null);
  const [restoredAt, setRestoredAt] = useState<string | null>(null);
  const [serverIssues, setServerIssues] = useState<Issue[]>([]);
  const [conflict, setConflict] = useState<ServerWorld | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [jump, setJump] = useState<string | null>(null);
  const [section, setSection] = useState<StudioSection>(() => {
    const hash = window.location.hash.slice(1);
    return (STUDIO_SECTIONS.find(([id]) => id === hash)?.[0] ?? 'basics') as StudioSection;
  });
  const loaded = useRef(false);
  useTitle(['Studio', draft ? String(draft.name ?? '') || 'Untitled world' : null]);

  useEffect(() => {
    if (loaded.current) return;
    loaded.current = true;
    (async () => {
      const local = readDraft(worldId);
      if (!worldId) {
        setDraft(local?.world ?? blankWorld(author));
        setText(local?.text ?? null);
        if (local) setRestoredAt(local.savedAt);
        return;
      }
      const res = await send<ServerWorld>(`/api/worlds/${encodeURIComponent(worldId)}`, 'GET');
      if (res.status !== 200) {
        setLoadError(res.body.error?.message ?? `Could not load this world (${res.status}).`);
        return;
      }
      setServer(res.body);
      if (local && (!same(local.world, res.body.world) || local.text !== null)) {
        setDraft(local.world);
        setText(local.text);
        setBaseRevision(local.baseRevision ?? res.body.revision);
        setRestoredAt(local.savedAt);
      } else {
        setDraft(res.body.world);
        setText(res.body.world.editorMode === 'advanced' ? pretty(res.body.world) : null);
        setBaseRevision(res.body.revision);
      }
    })();
  }, [worldId, author]);

  const advanced = draft?.editorMode === 'advanced';
  const parsed = useMemo((): { ok: true; world: Obj } | { ok: false; message: string } | null => {
    if (!advanced || text === null) return null;
    try {
      const value = JSON.parse(text) as unknown;
      if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: 'the world must be a JSON object' };
      return { ok: true, world: value as Obj };
    } catch (err) {
      return { ok: false, message: `not valid JSON: ${(err as Error).message}` };
    }
  }, [advanced, text]);

  const issues = useMemo((): Issue[] => {
    if (!draft) return [];
    if (parsed && !parsed.ok) return [{ path: '', message: parsed.message }];
    const result = validateWorld(draft);
    return result.ok ? [] : result.issues;
  }, [draft, parsed]);

  const dirty = !server || !draft || !same(draft, server.world) || (parsed !== null && !parsed.ok);

  useEffect(() => {
    if (!jump || advanced) return;
    if (section !== sectionOf(jump)) {
      setSection(sectionOf(jump));
      return;
    }
    const el = fieldFor(jump);
    setJump(null);
    if (!el) return;
    el.scrollIntoView({ block: 'center' });
    el.focus();
    el.classList.add('flash');
    setTimeout(() => el.classList.remove('flash'), 2000);
  }, [jump, advanced, section]);

  if (loadError) return <p role="alert">{loadError}</p>;
  if (!draft) return <p>Loading…</p>;

  const persist = (world: Obj, raw: string | null) => writeDraft(worldId, { world, text: raw, baseRevision });
  const change = (world: Obj) => {
    setDraft(world);
    setServerIssues([]);
    persist(world, null);
  };
  const changeText = (raw: string) => {
    setText(raw);
    setServerIssues([]);
    let world = draft;
    try {
      const value = JSON.parse(raw) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) world = { ...(value as Obj), editorMode: 'advanced' };
    } catch {}
    setDraft(world);
    persist(world, raw);
  };
  const setMode = (mode: 'simple' | 'advanced') => {
    const world = { ...draft, editorMode: mode };
    const raw = mode === 'advanced' ? pretty(world) : null;
    setDraft(world);
    setText(raw);
    persist(world, raw);
  };

  const adopt = (saved: ServerWorld) => {
    setServer(saved);
    setDraft(saved.world);
    setText(saved.world.editorMode === 'advanced' ? pretty(saved.world) : null);
    setBaseRevision(saved.revision);
    setRestoredAt(null);
    setConflict(null);
    clearDraft(worldId);
  };

  async function save(revision: number | null = baseRevision) {
    if (issues.length > 0 || !draft) return;
    setBusy(true);
    setMessage(null);
    try {
      if (!worldId) {
        const res = await send<ServerWorld>('/api/worlds', 'POST', { world: draft });
        if (res.status === 201) {
          clearDraft(null);
          window.history.replaceState(null, '', `/studio/${encodeURIComponent(res.body.id)}`);
          window.dispatchEvent(new Event('yumina:navigate'));
          return;
        }
        if (res.status === 422) setServerIssues(res.body.issues ?? []);
        else setMessage(res.body.error?.message ?? `Save failed (${res.status}); your draft is kept in this browser.`);
        return;
      }
      const res = await send<ServerWorld>(`/api/worlds/${encodeURIComponent(worldId)}`, 'PUT', { world: draft, revision });
      if (res.status === 200) {
        adopt(res.body);
        setMessage(res.body.status === 'published' && res.body.liveRevision !== res.body.revision ? 'Saved; this edit is held for review.' : 'Saved.');
      } else if (res.status === 409 && res.body.current) {
        setConflict(res.body.current);
        persist(draft, text);
      } else if (res.status === 422) setServerIssues(res.body.issues ?? []);
      else setMessage(res.body.error?.message ?? `Save failed (${res.status}); your draft is kept in this browser.`);
    } catch {
      setMessage('Save failed (network); your draft is kept in this browser.');
    } finally {
      setBusy(false);
    }
  }

  async function keepBoth() {
    if (!draft || !conflict) return;
    setBusy(true);
    const { id: _definitionId, ...rest } = draft;
    const copy = { ...rest, name: `${String(draft.name ?? 'Untitled').slice(0, 190)} (my copy)` };
    const res = await send<ServerWorld>('/api/worlds', 'POST', { world: copy });
    setBusy(false);
    if (res.status !== 201) {
      setMessage(res.body.error?.message ?? `Could not save a copy (${res.status}).`);
      return;
    }
    adopt(conflict);
    setMessage(`Your version was saved as a new world: ${res.body.id}.`);
  }

  const shownIssues = serverIssues.length > 0 ? serverIssues : issues;
  const issueMap = new Map<string, string[]>();
  for (const i of shownIssues) issueMap.set(i.path, [...(issueMap.get(i.path) ?? []), i.message]);
  const issueCount = (id: StudioSection) => shownIssues.filter((i) => i.path && sectionOf(i.path) === id).length;
  const worldName = String(draft.name ?? '');
  function exportWorld() {
    const blob = new Blob([pretty(draft!)], { type: 'application/json' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `${(worldName || 'world').replace(/[^\w.-]+/g, '-').slice(0, 80)}.json`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  }
  const pick = (id: StudioSection) => {
    setSection(id);
    window.history.replaceState(null, '', `${window.location.pathname}#${id}`);
  };
  return (
    <div className="studio">
      <header className="row studio-head">
        <h1>{worldId ? `Studio · ${worldName}` : 'Studio · new world'}</h1>
        <div className="row studio-toolbar" role="toolbar" aria-label="World">
          <fieldset className="row mode-switch" aria-label="Editor mode">
            <button type="button" className={advanced ? 'secondary' : ''} aria-pressed={!advanced} disabled={parsed !== null && !parsed.ok} onClick={() => setMode('simple')}>
              Simple mode
            </button>
            <button type="button" className={advanced ? '' : 'secondary'} aria-pressed={advanced} onClick={() => setMode('advanced')}>
              Advanced mode
            </button>
          </fieldset>
          <Link
            to={`/studio/${worldId ? encodeURIComponent(worldId) : 'new'}/character`}
            className="button secondary"
            title={dirty && server ? 'The character editor opens the saved version: save first to take your changes along' : 'Name, portrait, greetings, description, lore: the world as a character'}
          >
            Character editor
          </Link>
          <ImportDialog />
          <button type="button" className="secondary" onClick={exportWorld}>
            Export
          </button>
          {/* The saved world as a SillyTavern character card, with what it holds and cannot hold said first. */}
          {server && <CardExportDialog worldId={server.id} dirty={dirty} />}
          <button type="button" disabled={busy || issues.length > 0 || !dirty} onClick={() => save()}>
            {busy ? 'Saving…' : 'Save'}
          </button>
        </div>
      </header>
      {restoredAt && (
        <p className="hint" data-testid="draft-restored">
          Restored your unsaved draft from {shortDateTime(restoredAt)}.{' '}
          <button
            type="button"
            className="link"
            onClick={() => {
              clearDraft(worldId);
              setRestoredAt(null);
              if (server) adopt(server);
              else {
                setDraft(blankWorld(author));
                setText(null);
              }
            }}
          >
            Discard it
          </button>
        </p>
      )}
      {message && <p role="status">{message}</p>}
      {conflict && (
        <ConflictView
          mine={draft}
          theirs={conflict}
          baseRevision={baseRevision}
          busy={busy}
          onKeepMine={() => save(conflict.revision)}
          onTakeTheirs={() => adopt(conflict)}
          onKeepBoth={keepBoth}
        />
      )}
      {shownIssues.length > 0 && (
        <section className="card issues" aria-label="Issues">
          <h2>{count(shownIssues.length, 'issue')} — fix before saving</h2>
          <ul className="list">
            {shownIssues.map((issue) => (
              <li key={`${issue.path}\u0000${issue.message}`} data-issue-path={issue.path}>
                <code className="issue-path">{issue.path || '(world)'}</code> {issue.message}{' '}
                {issue.path && (
                  <button
                    type="button"
                    className="link"
                    disabled={parsed !== null && !parsed.ok}
                    onClick={() => {
                      if (advanced) setMode('simple');
                      setJump(issue.path);
                    }}
                  >
                    Show in simple mode
                  </button>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      {/* The interface's code and preview and the playtest player take the page's whole width. */}
      <div className={`studio-body${advanced ? ' advanced' : ''}${!advanced && (section === 'interface' || section === 'playtest' || section === 'assistant') ? ' wide' : ''}`}>
        {!advanced && (
          <nav className="studio-nav" aria-label="Studio sections">
            <ul>
              {STUDIO_SECTIONS.map(([id, label]) => (
                <li key={id}>
                  <button type="button" className="nav-item" aria-current={section === id ? 'page' : undefined} onClick={() => pick(id)}>
                    {label}
                    {issueCount(id) > 0 && (
                      <span className="count" aria-label={`${issueCount(id)} issues`}>
                        {issueCount(id)}
                      </span>
                    )}
                  </button>
                </li>
              ))}
            </ul>
          </nav>
        )}
        <div className="studio-editor">
          {advanced ? (
            <section className="card">
              <h2>World JSON</h2>
              <textarea aria-label="World JSON" className="json-editor" spellCheck={false} value={text ?? ''} onChange={(e) => changeText(e.target.value)} rows={30} />
            </section>
          ) : (
            <IssuesContext.Provider value={issueMap}>
              <div className="simple-editor">
                {section === 'interface' ? (
                  <InterfaceSection world={draft} onChange={change} />
                ) : section === 'playtest' ? (
                  <Playtest server={server} dirty={dirty} />
                ) : section === 'assistant' ? (
                  <AssistantPanel server={server} dirty={dirty} onApplied={adopt} />
                ) : (
                  <>
                    {section === 'tags' && (
                      <section className="card">
                        <CoverPicker
                          server={server}
                          name={worldName}
                          onServer={(next) => {
                            setServer(next);
                            setBaseRevision(next.revision);
                          }}
                        />
                        <PortraitPicker
                          server={server}
                          name={characterName({ name: worldName, entries: (draft.entries ?? []) as CharacterCandidate[] })}
                          onServer={(next) => {
                            setServer(next);
                            setBaseRevision(next.revision);
                          }}
                        />
                      </section>
                    )}
                    <SimpleEditor world={draft} onChange={change} section={section} />
                  </>
                )}
              </div>
            </IssuesContext.Provider>
          )}
        </div>
        <aside className="studio-side">
          <Overview server={server} dirty={dirty} onServer={(next) => setServer((s) => (s ? { ...s, ...next, world: s.world } : next))} />
          {server && <AssetsPanel worldId={server.id} />}
        </aside>
      </div>
    </div>
  );
}
