import {
  actionsUnavailable,
  ADVENTURE_LEVELS,
  availableOffers,
  boardSave,
  type BoardEffect,
  type BoardStep,
  chooseIntroduction,
  type CompanionBoard,
  type CompanionSave,
  type CompanionPreferences,
  DEFAULT_PREFERENCES,
  dismissProactive,
  EMPTY_COMPANION_SAVE,
  endedAttemptSave,
  freshAttemptSave,
  holdPause,
  isPaused,
  levelLabel,
  type Locale,
  type MilestoneInput,
  type NativeState,
  type Notebook,
  type Offer,
  panelUnavailable,
  proactiveRefusal,
  reaction,
  recordProactiveCall,
  releasePause,
  resolveLocale,
  revealedTin,
  startBoard,
  stepBoard,
  visitMilestone,
} from '@yumina/companion';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { ApiError } from '../lib/api.ts';
import { useSession } from '../lib/session.tsx';
import { type CompanionConfig, generate, loadConfig, loadNotebook, mutateNotebook, randomId, savePreferences } from './companion-api.ts';
import { CompanionPanel, type ConversationLine } from './CompanionPanel.tsx';
import { DemoSaves, type SaveStatus } from './demo-save.ts';
import { advance, companionContext, digPlant, finalWaveSpawned, houseDanger, type Lawn, newLawn, PLANTS, type PlantKind, placePlant } from './lawn.ts';
import { AdventureSignIn, DifficultyNote } from './AdventureEntry.tsx';
import { LawnView } from './LawnView.tsx';
import { openModelPicker, sessionModel } from './model-channel.ts';
import { NotebookWriter, type WritableMutation } from './notebook-writer.ts';
import { PlantSprite } from './sprites.tsx';
import { TinView } from './TinView.tsx';
import './companion.css';
import { useTitle } from '../lib/title.ts';

/**
 * /adventure/demo: a small playable adventure board that drives the companion rules (tin, offers,
 * panel pause, proactive comments, introductions, defeat aside) and the companion routes, so the
 * whole feature can be played and tested in a browser.
 */

const LEVEL_PRESETS: { level: number; label: string }[] = [
  { level: 6, label: '1-6 Day' },
  { level: 10, label: '1-10 Day (conveyor)' },
  { level: 12, label: '2-2 Night' },
  { level: 24, label: '3-4 Pool' },
  { level: 33, label: '4-3 Fog' },
  { level: 41, label: '5-1 Roof' },
];
const SPEEDS = [1, 2, 4, 16];
const FRAME_MS = 100;

export function DemoBoardPage() {
  useTitle(['Adventure demo']);
  const { info, loading } = useSession();
  if (loading) return <p className="hint">Loading…</p>;
  if (!info?.account) return <AdventureSignIn />;
  return <DemoBoard accountId={info.account.id} />;
}

function queryNumber(name: string, fallback: number, min: number, max: number): number {
  const raw = new URLSearchParams(window.location.search).get(name);
  const n = raw === null ? Number.NaN : Number(raw);
  return Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

interface Bubble {
  text: string;
  kind: 'introduction' | 'reaction' | 'proactive' | 'aside';
  /** Wall time after which it hides (null: until dismissed). */
  hideAtWallMs: number | null;
}

function DemoBoard({ accountId }: { accountId: string }) {
  const locale: Locale = resolveLocale(new URLSearchParams(window.location.search).get('lang') ?? navigator.language);
  const runId = useMemo(() => randomId(), []);
  const levelParam = useMemo(() => new URLSearchParams(window.location.search).has('level'), []);
  const [level, setLevel] = useState(() => queryNumber('level', 6, 1, 50));
  const cycle = useMemo(() => queryNumber('cycle', 1, 1, 999), []);
  const [speed, setSpeed] = useState(() => queryNumber('speed', 1, 1, 16));
  const [prefs, setPrefs] = useState<CompanionPreferences>(DEFAULT_PREFERENCES);
  const [tool, setTool] = useState<PlantKind | 'shovel'>('sunflower');
  const [, rerender] = useReducer((n: number) => n + 1, 0);

  const lawnRef = useRef<Lawn>(newLawn(level, cycle));
  const boardRef = useRef<CompanionBoard>(startBoard({ boardId: randomId(), level: lawnRef.current.level, cycle, save: EMPTY_COMPANION_SAVE }));
  const [panelOpen, setPanelOpen] = useState(false);
  const [bubble, setBubble] = useState<Bubble | null>(null);
  const [config, setConfig] = useState<CompanionConfig | null>(null);
  const [configError, setConfigError] = useState<string | null>(null);
  const [notebook, setNotebook] = useState<Notebook | null>(null);
  const notebookRef = useRef<Notebook | null>(null);
  const [lines, setLines] = useState<ConversationLine[]>([]);
  const lineId = useRef(0);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [model, setModel] = useState<string | null>(() => sessionModel(accountId));
  const generation = useRef<AbortController | null>(null);
  const pickerRef = useRef<{ close(): void } | null>(null);
  const lastProactiveWave = useRef(0);
  const introduced = useRef<string | null>(null);
  const [saveStatus, setSaveStatus] = useState<SaveStatus>('idle');
  const saves = useRef<DemoSaves | null>(null);
  saves.current ??= new DemoSaves(setSaveStatus);
  const savedRef = useRef<CompanionSave>(EMPTY_COMPANION_SAVE);
  const [ready, setReady] = useState(false);
  const [notebookProblem, setNotebookProblem] = useState<string | null>(null);

  const say = useCallback((who: ConversationLine['who'], text: string) => {
    setLines((l) => [...l, { id: ++lineId.current, who, text }].slice(-40));
  }, []);

  const setNb = useCallback((nb: Notebook) => {
    notebookRef.current = nb;
    setNotebook(nb);
  }, []);

  // Notebook writes go one after another; a refused revision is re-read and re-applied (additive
  // writes), a failure is retried with backoff and reported, and never drops the writes after it.
  const writer = useMemo(
    () =>
      new NotebookWriter({
        transport: { read: loadNotebook, write: mutateNotebook },
        current: () => notebookRef.current,
        onNotebook: setNb,
        onProblem: (outcome, mutation) => {
          if (outcome.status === 'failed') setNotebookProblem(`The notebook could not save (${mutation.op}) after several tries: ${outcome.message}`);
          else setError(outcome.message);
        },
      }),
    [setNb],
  );
  const write = useCallback(
    (mutation: WritableMutation) =>
      writer.enqueue(mutation).then((o) => {
        if (o.status === 'applied') setNotebookProblem(null);
        return o;
      }),
    [writer],
  );
  const record = useCallback(
    (milestones: MilestoneInput[]) => {
      for (let i = 0; i < milestones.length; i += 16) void write({ op: 'record', milestones: milestones.slice(i, i + 16) });
    },
    [write],
  );

  /** Saves the companion chunks together with the lawn they belong to (a checkpoint). */
  const checkpoint = useCallback(() => {
    const lawn = lawnRef.current;
    if (lawn.result !== 'in-progress' || boardRef.current.result !== 'in-progress') return;
    savedRef.current = boardSave(boardRef.current);
    saves.current!.write(savedRef.current, lawn);
  }, []);

  /** The attempt ended (won, lost, left): the save becomes a fresh attempt; its tin is gone for good. */
  const endAttempt = useCallback(() => {
    savedRef.current = endedAttemptSave(boardRef.current);
    saves.current!.write(savedRef.current, null);
  }, []);

  useEffect(() => {
    loadConfig().then(
      (c) => {
        setConfig(c);
        setPrefs(c.preferences);
      },
      (e: Error) => setConfigError(e.message),
    );
    // The save resumes the lawn and this level's tin and offers at the same moment (contents fixed, never re-rolled).
    saves.current!.load().then(
      ({ companion, lawn }) => {
        const resume = lawn && (!levelParam || lawn.level.level === lawnRef.current.level.level) ? lawn : null;
        if (resume) {
          lawnRef.current = resume;
          setLevel(resume.level.level);
        }
        const save = resume ? companion : freshAttemptSave(companion);
        savedRef.current = save;
        boardRef.current = startBoard({ boardId: boardRef.current.boardId, level: lawnRef.current.level, cycle, save });
        setReady(true);
      },
      () => setReady(true),
    );
    loadNotebook().then(setNb, () => {});
    const exit = () => saves.current!.flushOnExit();
    window.addEventListener('pagehide', exit);
    return () => {
      window.removeEventListener('pagehide', exit);
      generation.current?.abort();
      pickerRef.current?.close();
    };
  }, [cycle, levelParam, setNb]);

  const setPreference = useCallback((change: Partial<CompanionPreferences>) => {
    setPrefs((p) => ({ ...p, ...change }));
    savePreferences(change).then(setPrefs, (e: Error) => {
      setError(`The preference was not saved: ${e.message}`);
      loadConfig().then((c) => setPrefs(c.preferences), () => {});
    });
  }, []);

  // Chapter introduction: authored, per account and campaign cycle, no model request.
  useEffect(() => {
    const lawn = lawnRef.current;
    const key = `${boardRef.current.boardId}`;
    if (!notebook || introduced.current === key) return;
    introduced.current = key;
    const decision = chooseIntroduction({ chapter: lawn.level.chapter, cycle, markers: notebook.chapters, completedCycles: notebook.completedCycles, locale });
    if (!decision) return;
    setBubble({ text: decision.text, kind: 'introduction', hideAtWallMs: Date.now() + 8_000 });
    say('companion', decision.text);
    void write({ op: 'introduction', chapter: decision.chapter, cycle, kind: decision.kind });
  }, [notebook, cycle, locale, say, write]);

  const applyEffects = useCallback(
    (effects: BoardEffect[]) => {
      const lawn = lawnRef.current;
      for (const e of effects) {
        switch (e.type) {
          case 'take-sun':
            lawn.sun = Math.max(0, lawn.sun - e.amount);
            break;
          case 'add-sun':
            lawn.sun += e.amount;
            break;
          case 'grant-seed':
            lawn.bonusSeeds.push('cherry-bomb');
            break;
          case 'reaction': {
            const text = reaction(e.kind, locale);
            say('companion', text);
            setBubble({ text, kind: 'reaction', hideAtWallMs: Date.now() + 5_000 });
            break;
          }
          case 'show-invitation': {
            const text = reaction('tin-invitation', locale);
            say('companion', text);
            record([visitMilestone(lawn.level.level, lawn.cycle, boardRef.current.boardId)]);
            break;
          }
          case 'aside':
            setBubble({ text: reaction('defeat-aside', locale), kind: 'aside', hideAtWallMs: e.hideAtWallMs });
            break;
        }
      }
    },
    [locale, record, say],
  );

  /** Runs one companion rules step and applies its effects and notebook records. */
  const apply = useCallback(
    (step: BoardStep) => {
      boardRef.current = step.board;
      applyEffects(step.effects);
      record(step.milestones);
      // Checkpoints (something was recorded): the companion chunks with the lawn of the same moment.
      if (step.milestones.length > 0) checkpoint();
      // The board lives in a ref: what it shows changed, so the view renders (the game loop's tick
      // renders only while the lawn runs; a paused or ended board changes only by the player's hand).
      rerender();
      return step;
    },
    [applyEffects, checkpoint, record],
  );

  const native = useCallback((): NativeState => {
    const lawn = lawnRef.current;
    return {
      sun: lawn.sun,
      conveyor: lawn.level.conveyor,
      cherryBombUnlocked: lawn.level.level > 2,
      nextWave: lawn.nextWave + 1,
      totalWaves: lawn.waves.length,
      nativeLoss: boardRef.current.nativeLoss,
    };
  }, []);

  const sendGeneration = useCallback(
    async (message: string, proactive: boolean) => {
      if (!config) return;
      generation.current?.abort();
      const controller = new AbortController();
      generation.current = controller;
      const board = boardRef.current;
      const lawn = lawnRef.current;
      const scope = { runId, boardId: board.boardId, level: lawn.level.level };
      if (!proactive) {
        say('player', message);
        setSending(true);
      }
      setError(null);
      try {
        const nb = notebookRef.current;
        const context = companionContext(lawn, {
          locale,
          tin: (() => {
            const t = revealedTin(board.encounter);
            return t.phase === 'opened' ? { phase: 'opened' as const, contents: t.contents } : { phase: t.phase };
          })(),
          nativeLoss: board.nativeLoss,
          selectedPlants: ['sunflower', 'peashooter', 'wall-nut'],
        });
        const reply = await generate(
          { accountId: config.accountId, ...scope, message, context, model: model ?? undefined, base: nb ? { revision: nb.revision, epoch: nb.epoch } : undefined },
          controller.signal,
        );
        // A reply for another board or level (navigation, restart) is dropped.
        if (boardRef.current.boardId !== reply.boardId || lawnRef.current.level.level !== scope.level || controller.signal.aborted) return;
        say('companion', reply.reply);
        // Written only against the revision it was based on: a notebook that changed meanwhile keeps its own state.
        if (!reply.notebook.saved && !proactive) say('narration', 'This exchange was not remembered: the notebook changed while the companion answered.');
        if (proactive) setBubble({ text: reply.reply, kind: 'proactive', hideAtWallMs: null });
        loadNotebook().then(setNb, () => {});
      } catch (e) {
        if (controller.signal.aborted) return;
        setError(e instanceof ApiError ? e.message : 'The companion could not answer.');
      } finally {
        if (generation.current === controller) {
          generation.current = null;
          setSending(false);
        }
      }
    },
    [config, locale, model, runId, say, setNb],
  );

  /** The panel's Stop: cancels the player's reply in flight (the server then aborts the provider call). */
  const stopGeneration = useCallback(() => {
    const running = generation.current;
    if (!running) return;
    running.abort();
    generation.current = null;
    setSending(false);
    say('narration', 'Stopped. Your AI provider may still bill for work it started before the cancellation.');
  }, [say]);

  // The game loop: advances only while no pause is held; feeds moments into the companion rules.
  useEffect(() => {
    const timer = setInterval(() => {
      const lawn = lawnRef.current;
      let board = boardRef.current;
      if (bubble?.hideAtWallMs && Date.now() > bubble.hideAtWallMs) setBubble(null);
      // Paused, ended or still loading: nothing moves, so nothing renders (what the player does
      // then renders through apply, setState or its own rerender).
      if (!ready || isPaused(board.pause) || lawn.result !== 'in-progress') return;
      const events = advance(lawn, FRAME_MS * speed);
      let waveMoment = false;
      for (const ev of events) {
        if (ev.type === 'wave-spawned' || ev.type === 'wave-cleared') waveMoment = true;
        if (ev.type === 'wave-cleared') board = apply(stepBoard(board, { type: 'wave-cleared', wave: ev.wave }, prefs)).board;
        if (ev.type === 'won' || ev.type === 'lost') {
          board = apply(stepBoard(board, { type: 'level-end', result: ev.type, wallMs: Date.now() }, prefs)).board;
          generation.current?.abort();
          endAttempt();
          // Winning the last level completes the campaign cycle: later cycles get the replay greeting.
          if (ev.type === 'won' && lawn.level.level === 50) void write({ op: 'complete', cycle: lawn.cycle });
        }
        if (ev.type === 'wave-spawned' && ev.wave > lastProactiveWave.current) {
          lastProactiveWave.current = ev.wave;
          const now = { simMs: lawn.simMs, paused: false, boardId: board.boardId };
          if (config?.provider.usable && proactiveRefusal(board.proactive, prefs, now) === null) {
            board = { ...board, proactive: recordProactiveCall(board.proactive, lawn.simMs) };
            boardRef.current = board;
            void sendGeneration(`(Wave ${ev.wave} of ${lawn.waves.length} is arriving. Say something short.)`, true);
          }
        }
      }
      if (waveMoment) checkpoint();
      if (lawn.result === 'in-progress') {
        apply(
          stepBoard(
            board,
            {
              type: 'tick',
              moment: {
                activeMs: lawn.simMs,
                paused: false,
                houseDanger: houseDanger(lawn),
                lastMowerAtMs: lawn.lastMowerAtMs,
                finalWaveSpawned: finalWaveSpawned(lawn),
                companionScene: false,
                modalOpen: false,
                scriptedSequence: false,
                transition: false,
              },
            },
            prefs,
          ),
        );
      }
      rerender();
    }, FRAME_MS);
    return () => clearInterval(timer);
  }, [apply, bubble, checkpoint, config, endAttempt, prefs, ready, sendGeneration, speed, write]);

  const restart = (nextLevel: number) => {
    generation.current?.abort();
    // Leaving an attempt ends it like a defeat or a win does: its sealed tin is gone.
    if (lawnRef.current.result === 'in-progress') {
      apply(stepBoard(boardRef.current, { type: 'level-end', result: 'left', wallMs: Date.now() }, prefs));
      endAttempt();
    }
    lawnRef.current = newLawn(nextLevel, cycle);
    boardRef.current = startBoard({ boardId: randomId(), level: lawnRef.current.level, cycle, save: savedRef.current, aside: boardRef.current.aside });
    lastProactiveWave.current = 0;
    introduced.current = null;
    setBubble(null);
    setPanelOpen(false);
    setLevel(nextLevel);
    if (notebookRef.current) setNb({ ...notebookRef.current });
    rerender();
  };

  const openPanel = () => {
    apply(stepBoard(boardRef.current, { type: 'panel-open' }, prefs));
    setPanelOpen(true);
    loadNotebook().then(setNb, () => {});
  };
  const closePanel = () => {
    apply(stepBoard(boardRef.current, { type: 'panel-close' }, prefs));
    setPanelOpen(false);
  };
  const togglePlayerPause = () => {
    const b = boardRef.current;
    boardRef.current = { ...b, pause: b.pause.owners.includes('player') ? releasePause(b.pause, 'player') : holdPause(b.pause, 'player') };
    rerender();
  };

  const lawn = lawnRef.current;
  const board = boardRef.current;
  const enc = board.encounter;
  const paused = isPaused(board.pause);
  const situation = {
    disabled: config ? !config.enabled : false,
    mode: 'adventure' as const,
    modalOpen: false,
    scriptedSequence: false,
    vasePuzzle: lawn.level.vasePuzzle,
    finalBoss: lawn.level.finalBoss,
    transition: false,
    nativeLoss: board.nativeLoss,
  };
  const blockedActions = actionsUnavailable(situation);
  const panelBlocked = panelUnavailable(situation);
  const offers = blockedActions ? [] : availableOffers(board.offers, board.flags, native());
  const state =
    lawn.result === 'won' ? 'Won' : lawn.result === 'lost' ? 'Lost' : board.pause.owners.includes('companion-panel') ? 'Paused (companion)' : paused ? 'Paused' : 'Running';

  const onCell = (row: number, column: number) => {
    if (lawn.result !== 'in-progress') return;
    if (tool === 'shovel') {
      if (digPlant(lawn, row, column)) apply(stepBoard(boardRef.current, { type: 'dig' }, prefs));
    } else {
      const refusal = placePlant(lawn, tool, row, column);
      if (refusal) setError(`Cannot plant there: ${refusal.replace(/-/g, ' ')}.`);
    }
    rerender();
  };

  if (!ready) {
    return (
      <section className="demo-board">
        <h1>Adventure demo</h1>
        <p className="hint">Loading your save…</p>
      </section>
    );
  }

  return (
    <section className="demo-board">
      <h1>Adventure demo · {levelLabel(lawn.level.level)}</h1>
      <DifficultyNote />
      <div className="row board-controls">
        <label className="inline">
          Level
          <select value={level} onChange={(e) => restart(Number(e.target.value))} aria-label="Level">
            {[...LEVEL_PRESETS, ...(LEVEL_PRESETS.some((p) => p.level === level) ? [] : [{ level, label: levelLabel(level) }])].map((p) => (
              <option key={p.level} value={p.level}>
                {p.label}
              </option>
            ))}
          </select>
        </label>
        <label className="inline">
          Speed
          <select value={speed} onChange={(e) => setSpeed(Number(e.target.value))} aria-label="Speed">
            {SPEEDS.map((s) => (
              <option key={s} value={s}>
                {s}×
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="secondary" onClick={togglePlayerPause} disabled={lawn.result !== 'in-progress'}>
          {board.pause.owners.includes('player') ? 'Resume' : 'Pause'}
        </button>
        <button type="button" onClick={panelOpen ? closePanel : openPanel} disabled={!panelOpen && (!!panelBlocked || !!configError)}>
          {panelOpen ? 'Close companion' : 'Talk to the companion'}
        </button>
        {panelBlocked && !panelOpen && <span className="hint">The companion is unavailable here ({panelBlocked.replace(/-/g, ' ')}).</span>}
        <label className="inline">
          <input
            type="checkbox"
            checked={prefs.occasionalVisits}
            disabled={!config}
            onChange={(e) => setPreference({ occasionalVisits: e.target.checked })}
          />
          Occasional visits
        </label>
        <label className="inline">
          <input
            type="checkbox"
            checked={prefs.proactiveComments}
            disabled={!config}
            onChange={(e) => setPreference({ proactiveComments: e.target.checked })}
          />
          Proactive comments
        </label>
      </div>
      <p className="row status">
        <span>
          Sun: <strong data-testid="sun">{lawn.sun}</strong>
        </span>
        <span>
          Wave {Math.min(lawn.nextWave, lawn.waves.length)}/{lawn.waves.length}
        </span>
        <span data-testid="board-state">{state}</span>
        <span>
          Time: <span data-testid="sim-time">{Math.floor(lawn.simMs / 1000)}</span> s
        </span>
        {lawn.level.conveyor && <span className="badge">Conveyor: sun offers are off</span>}
        {lawn.fogFromColumn !== null && <span className="badge">Fog</span>}
        <span className="hint" data-testid="save-status" data-status={saveStatus}>
          {saveStatus === 'saving' ? 'Saving…' : saveStatus === 'saved' ? 'Saved' : saveStatus === 'failed' ? 'Not saved' : ''}
        </span>
      </p>
      {notebookProblem && (
        <p role="alert" data-testid="notebook-problem">
          {notebookProblem}
        </p>
      )}
      <div className="row tools" role="toolbar" aria-label="Plants">
        {(lawn.level.conveyor ? [...new Set(lawn.belt)] : (['sunflower', 'peashooter', 'wall-nut'] as PlantKind[])).map((k) => (
          <button key={k} type="button" className={tool === k ? '' : 'secondary'} onClick={() => setTool(k)} aria-pressed={tool === k}>
            <PlantSprite kind={k} size={22} />
            {PLANTS[k].name}
            {lawn.level.conveyor ? ` ×${lawn.belt.filter((b) => b === k).length}` : ` (${PLANTS[k].cost})`}
          </button>
        ))}
        {lawn.bonusSeeds.length > 0 && (
          <button type="button" className={tool === 'cherry-bomb' ? '' : 'secondary'} onClick={() => setTool('cherry-bomb')}>
            <PlantSprite kind="cherry-bomb" size={22} />
            Cherry Bomb (gift) ×{lawn.bonusSeeds.length}
          </button>
        )}
        <button type="button" className={tool === 'shovel' ? '' : 'secondary'} onClick={() => setTool('shovel')}>
          Shovel
        </button>
      </div>

      {bubble && (
        <div className={`bubble ${bubble.kind}`} role="status" data-testid="companion-bubble">
          {bubble.text}
          {bubble.kind === 'proactive' && (
            <button
              type="button"
              className="link"
              onClick={() => {
                boardRef.current = { ...boardRef.current, proactive: dismissProactive(boardRef.current.proactive, boardRef.current.boardId) };
                setBubble(null);
              }}
            >
              Dismiss
            </button>
          )}
        </div>
      )}

      <TinView
        encounter={enc}
        activeMs={lawn.simMs}
        sun={lawn.sun}
        nativeLoss={board.nativeLoss}
        locale={locale}
        onPay={() => apply(stepBoard(boardRef.current, { type: 'tin-pay', sun: lawnRef.current.sun, activeMs: lawnRef.current.simMs }, prefs))}
        onDecline={() => apply(stepBoard(boardRef.current, { type: 'tin-decline' }, prefs))}
        onOpen={() => apply(stepBoard(boardRef.current, { type: 'tin-open' }, prefs))}
      />

      <div className="board-layout">
        <LawnView lawn={lawn} onCell={onCell} />
        {panelOpen && (
          <CompanionPanel
            config={config}
            notebook={notebook}
            locale={locale}
            lines={lines}
            sending={sending}
            error={error ?? configError}
            model={model}
            offers={offers}
            actionsDisabled={blockedActions ? (blockedActions === 'native-loss' ? 'Companion actions are off after a lost attempt.' : 'Companion actions are unavailable right now.') : null}
            onSend={(m) => void sendGeneration(m, false)}
            onStop={stopGeneration}
            onClose={closePanel}
            onPickModel={() => {
              if (!config) return;
              pickerRef.current?.close();
              pickerRef.current = openModelPicker(config.accountId, config.modelBrowserPath, (m) => setModel(m));
            }}
            onAcceptOffer={(offer: Offer) => {
              const step = apply(stepBoard(boardRef.current, { type: 'offer-accept', offer, native: native() }, prefs));
              if (step.rejected) setError(`That offer is no longer available (${step.rejected.replace(/-/g, ' ')}).`);
              rerender();
            }}
            onClearNotebook={() => void write({ op: 'reset' })}
            onAddNote={(text) => void write({ op: 'note-add', id: randomId(), text })}
            onRemoveNote={(id) => void write({ op: 'note-remove', id })}
          />
        )}
      </div>
      {lawn.result !== 'in-progress' && (
        <div className="row level-end">
          <strong>{lawn.result === 'won' ? 'Level complete!' : 'The zombies ate your brains.'}</strong>
          {/* A won level leads on to the next one; replaying it stays possible. */}
          {lawn.result === 'won' && level < ADVENTURE_LEVELS && (
            <button type="button" onClick={() => restart(level + 1)}>
              Next level ({levelLabel(level + 1)})
            </button>
          )}
          <button type="button" className={lawn.result === 'won' && level < ADVENTURE_LEVELS ? 'secondary' : ''} onClick={() => restart(level)}>
            {lawn.result === 'won' ? 'Play again' : 'Try again'}
          </button>
        </div>
      )}
    </section>
  );
}
