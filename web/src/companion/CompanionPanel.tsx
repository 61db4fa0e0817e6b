import { levelLabel, type Locale, type Notebook, type Offer, suggestedMessage } from '@yumina/companion';
import { useState } from 'react';
import type { CompanionConfig } from './companion-api.ts';

/**
 * The companion panel: conversation, suggested complaint/thanks (fills the composer only), the
 * notebook (view, pinned notes, clear), the model picker and the link to connection settings, and
 * the companion's offers. It holds no game rules: the board page passes state and callbacks.
 */

export interface ConversationLine {
  id: number;
  who: 'player' | 'companion' | 'narration';
  text: string;
}

export const MILESTONE_LABELS: Record<string, string> = {
  'tin-offered': 'Was offered a suspicious tin',
  'tin-bought': 'Bought a suspicious tin (25 sun)',
  'tin-opened-sun': 'Opened the tin: 75 sun inside',
  'tin-opened-empty': 'Opened the tin: it was empty',
  'tin-passed': 'Let the tin offer pass',
  'tin-gone': 'Left a sealed tin behind',
  'lost-attempt': 'Lost an attempt',
  'level-complete': 'Completed the level',
  visit: 'Companion visited',
  'offer-gift': 'Gave the companion 50 sun',
  'offer-punch': 'Gave the companion a cartoon punch',
  'offer-apology': 'Apologized to the companion',
  'offer-plant': 'Bought a Cherry Bomb from the companion',
  'offer-challenge': 'Accepted the no-shovel challenge',
  'offer-challenge-won': 'Won the no-shovel challenge (75 sun)',
  'offer-challenge-failed': 'Failed the no-shovel challenge',
};

const OFFER_LABELS: Record<Offer['kind'], (o: Offer) => string> = {
  gift: (o) => `Give ${o.price} sun`,
  punch: () => 'Cartoon punch',
  apology: () => 'Apologize',
  plant: (o) => `Buy a Cherry Bomb (${o.price} sun)`,
  challenge: () => 'No-shovel challenge (75 sun)',
};

export interface CompanionPanelProps {
  config: CompanionConfig | null;
  notebook: Notebook | null;
  locale: Locale;
  lines: ConversationLine[];
  sending: boolean;
  error: string | null;
  model: string | null;
  offers: Offer[];
  actionsDisabled: string | null;
  onSend(message: string): void;
  /** Cancels the reply being written (the browser request and, through it, the provider call). */
  onStop(): void;
  onClose(): void;
  onPickModel(): void;
  onAcceptOffer(offer: Offer): void;
  onClearNotebook(): void;
  onAddNote(text: string): void;
  onRemoveNote(id: string): void;
}

export function CompanionPanel(props: CompanionPanelProps) {
  const [draft, setDraft] = useState('');
  const [note, setNote] = useState('');
  const [tab, setTab] = useState<'talk' | 'notebook'>('talk');
  const { config, notebook } = props;
  const canTalk = !!config?.enabled && !!config.provider.usable;
  const submit = () => {
    const text = draft.trim();
    if (!text || props.sending) return;
    props.onSend(text);
    setDraft('');
  };
  return (
    <aside className="card companion-panel" role="dialog" aria-label="Companion">
      <div className="row companion-head">
        <strong>Companion</strong>
        <div className="row">
          <button type="button" className={tab === 'talk' ? '' : 'secondary'} onClick={() => setTab('talk')}>
            Talk
          </button>
          <button type="button" className={tab === 'notebook' ? '' : 'secondary'} onClick={() => setTab('notebook')}>
            Notebook
          </button>
          <button type="button" className="secondary" onClick={props.onClose}>
            Close
          </button>
        </div>
      </div>

      {tab === 'talk' ? (
        <>
          <ol className="list conversation" aria-label="Conversation" data-testid="conversation">
            {props.lines.map((l) => (
              <li key={l.id} className={`line ${l.who}`} data-who={l.who}>
                {l.who === 'player' ? 'You: ' : l.who === 'companion' ? 'Companion: ' : ''}
                {l.text}
              </li>
            ))}
          </ol>
          {config && !config.enabled && <p className="hint">The companion is turned off on this server.</p>}
          {config?.enabled && !config.provider.usable && (
            <p className="hint" data-testid="no-provider">
              Conversation uses your own AI connection. <a href={config.settingsPath}>Set it up in settings</a>; the tin, offers and
              introductions work without it.
            </p>
          )}
          {props.error && <p role="alert">{props.error}</p>}
          <form
            aria-label="Composer"
            onSubmit={(e) => {
              e.preventDefault();
              submit();
            }}
          >
            <label>
              Message
              <textarea
                value={draft}
                maxLength={config?.limits.messageMaxChars ?? 2000}
                rows={2}
                placeholder="Enter sends, Shift+Enter starts a new line"
                onChange={(e) => setDraft(e.target.value)}
                onKeyDown={(e) => {
                  // Enter sends (as in the player's chat); Shift+Enter and a composing input method keep their newline.
                  if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
                    e.preventDefault();
                    submit();
                  }
                }}
                disabled={!canTalk}
              />
            </label>
            <div className="row">
              <button type="submit" disabled={!canTalk || props.sending || !draft.trim()}>
                {props.sending ? 'Waiting…' : 'Send'}
              </button>
              {props.sending && (
                <button type="button" className="secondary" onClick={props.onStop} aria-describedby="companion-stop-disclosure">
                  Stop
                </button>
              )}
              <button type="button" className="secondary" onClick={() => setDraft(suggestedMessage('complaint', props.locale))}>
                Suggest a complaint
              </button>
              <button type="button" className="secondary" onClick={() => setDraft(suggestedMessage('thanks', props.locale))}>
                Suggest thanks
              </button>
            </div>
            {props.sending && (
              <p className="hint" id="companion-stop-disclosure" data-testid="stop-disclosure">
                Stop cancels the request, but your AI provider may still bill for work it started before the cancellation.
              </p>
            )}
          </form>
          <p className="hint">
            Model: <span data-testid="companion-model">{props.model ?? config?.model ?? 'none'}</span>{' '}
            <button type="button" className="link" onClick={props.onPickModel} disabled={!config}>
              Choose model…
            </button>{' '}
            · <a href="/app/settings#ai-config">AI connection settings</a>
          </p>
          <section aria-label="Offers">
            <h4>Offers</h4>
            {props.actionsDisabled ? (
              <p className="hint">{props.actionsDisabled}</p>
            ) : props.offers.length === 0 ? (
              <p className="hint">Nothing to offer right now.</p>
            ) : (
              <div className="row">
                {props.offers.map((o) => (
                  <button type="button" className="secondary" key={o.kind} onClick={() => props.onAcceptOffer(o)}>
                    {OFFER_LABELS[o.kind](o)}
                  </button>
                ))}
              </div>
            )}
          </section>
        </>
      ) : (
        <section aria-label="Notebook" data-testid="notebook">
          {!notebook ? (
            <p className="hint">Loading the notebook…</p>
          ) : (
            <>
              <h4>Observed</h4>
              <ul className="list" data-testid="notebook-milestones">
                {notebook.milestones.length === 0 && <li className="hint">Nothing yet.</li>}
                {notebook.milestones.map((m) => (
                  <li key={m.key} data-kind={m.kind}>
                    {levelLabel(m.level)} · {MILESTONE_LABELS[m.kind] ?? m.kind}
                  </li>
                ))}
              </ul>
              <h4>Remembered you said</h4>
              <ul className="list">
                {notebook.statements.length === 0 && <li className="hint">Nothing yet.</li>}
                {notebook.statements.map((s) => (
                  <li key={`${s.cycle}:${s.text}`}>“{s.text}”</li>
                ))}
              </ul>
              <h4>Pinned notes</h4>
              <ul className="list">
                {notebook.notes.map((n) => (
                  <li key={n.id}>
                    {n.text}{' '}
                    <button type="button" className="link" onClick={() => props.onRemoveNote(n.id)}>
                      Remove
                    </button>
                  </li>
                ))}
              </ul>
              <form
                aria-label="Pin a note"
                onSubmit={(e) => {
                  e.preventDefault();
                  if (note.trim()) props.onAddNote(note.trim());
                  setNote('');
                }}
              >
                <div className="row">
                  <input aria-label="Note" value={note} maxLength={300} onChange={(e) => setNote(e.target.value)} />
                  <button type="submit" className="secondary">
                    Pin
                  </button>
                </div>
              </form>
              <h4>Chapters</h4>
              <ul className="list">
                {notebook.chapters.map((c) => (
                  <li key={`${c.chapter}:${c.cycle}`}>
                    {c.chapter} (cycle {c.cycle}, {c.kind})
                  </li>
                ))}
              </ul>
              <p className="hint">
                {notebook.turns.length} saved dialogue turns · revision {notebook.revision}
              </p>
              <button type="button" className="secondary" onClick={props.onClearNotebook}>
                Clear notebook
              </button>
              <p className="hint">Clearing the notebook does not touch your game progress.</p>
            </>
          )}
        </section>
      )}
    </aside>
  );
}
