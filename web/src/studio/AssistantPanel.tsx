import { useEffect, useRef, useState } from 'react';
import { count } from '../lib/text.ts';
import { SandboxHost } from '../sandbox/SandboxHost.tsx';
import type { ServerWorld } from './server.ts';
import { type AssistantRound, type AssistantStep, type CardChange, useAssistant } from './use-assistant.ts';

/**
 * The studio assistant (issue 48, docs/STUDIO-ASSISTANT.md): the author describes what they want;
 * the assistant answers with a change card of checked operations and their diff. Approve applies
 * the card as one revision (a snapshot to roll back to), Reject with a reason asks again. It never
 * publishes; each step's cost is shown; Stop ends a step at once.
 */
export function AssistantPanel({ server, dirty, onApplied }: { server: ServerWorld | null; dirty: boolean; onApplied(world: ServerWorld): void }) {
  if (!server) return <p className="card">Save the world once to build it with the assistant.</p>;
  return <Assistant server={server} dirty={dirty} onApplied={onApplied} />;
}

function Assistant({ server, dirty, onApplied }: { server: ServerWorld; dirty: boolean; onApplied(world: ServerWorld): void }) {
  const a = useAssistant(server.id, onApplied);
  const [request, setRequest] = useState('');
  const working = a.running !== null;
  const blocked = dirty ? 'You have unsaved edits: save or discard them before applying or rolling back.' : null;
  return (
    <section className="card assistant" aria-labelledby="assistant-heading" data-testid="assistant">
      <h2 id="assistant-heading">Assistant</h2>
      <p className="hint">
        Describe what you want; the assistant proposes a change card. Nothing changes until you approve it, every approved card can be rolled back, and the assistant never
        publishes. It runs on your AI connection or platform credits; each step&apos;s cost is shown.
      </p>
      {a.rounds === null && <p>Loading…</p>}
      <ol className="assistant-thread" aria-label="Conversation with the assistant">
        {(a.rounds ?? []).map((round) => (
          <Round key={round.id} round={round} revision={server.revision} busy={a.busy || working} blocked={blocked} assistant={a} />
        ))}
        {a.running && (
          <li className="assistant-round" aria-busy="true">
            <p className="assistant-request">{a.running.kind === 'feedback' ? `Rejected: ${a.running.request}` : a.running.request}</p>
            <Steps steps={a.running.steps} />
            <p role="status" className="assistant-working">
              Working… step {a.running.steps.length + 1}
            </p>
          </li>
        )}
      </ol>
      {a.error && (
        <p role="alert" className="assistant-error">
          {a.error}
        </p>
      )}
      <form
        className="assistant-compose"
        onSubmit={(e) => {
          e.preventDefault();
          const text = request.trim();
          if (!text || working) return;
          setRequest('');
          void a.ask(text);
        }}
      >
        <label className="labelled">
          What should the assistant build or change?
          <textarea
            value={request}
            rows={4}
            maxLength={8000}
            placeholder="A survival game over 14 nights with health and energy, a knocking event, a CRT-style screen…"
            onChange={(e) => setRequest(e.target.value)}
          />
        </label>
        <div className="row">
          <button type="submit" disabled={working || !request.trim()}>
            Ask the assistant
          </button>
          {working && (
            <button type="button" className="secondary" onClick={a.stop}>
              Stop
            </button>
          )}
        </div>
      </form>
    </section>
  );
}

const STATUS_LABELS: Record<AssistantRound['status'], string> = {
  running: 'Working',
  proposed: 'Proposed',
  approved: 'Approved',
  rejected: 'Rejected',
  superseded: 'Replaced',
  answered: 'Answered',
  stopped: 'Stopped',
  failed: 'Failed',
};

/** How long a card's interface must run in the sandbox preview without an error before the card may be approved. */
const RUNTIME_CHECK_MS = 2500;

/**
 * The runtime check of a card that writes interface files: the interface after the card runs in the
 * studio's sandbox preview (the same frame and rules as any world's code); an error it reports goes
 * back to the assistant at once (the card is rejected with the error as the reason), so a card whose
 * interface fails is never approved.
 */
function RuntimeCheck({ round, onResult }: { round: AssistantRound; onResult(result: 'ok' | { error: string }): void }) {
  const done = useRef(false);
  const report = useRef(onResult);
  report.current = onResult;
  useEffect(() => {
    const timer = setTimeout(() => {
      if (done.current) return;
      done.current = true;
      report.current('ok');
    }, RUNTIME_CHECK_MS);
    return () => clearTimeout(timer);
  }, []);
  const preview = round.preview!;
  return (
    <div className="assistant-preview">
      <h4>Interface preview of this card</h4>
      <SandboxHost
        world={{ id: `assistant-${round.id}`, name: 'Preview', rootComponent: preview.rootComponent }}
        state={{ variables: preview.variables, sessionId: 'assistant-preview', messages: [], entries: [], checkpoints: [] }}
        handlers={{}}
        title="Card interface preview"
        className="sandbox-frame"
        style={{ width: '100%', height: 260, display: 'block' }}
        onFrameError={(message) => {
          if (done.current) return;
          done.current = true;
          report.current({ error: message });
        }}
      />
    </div>
  );
}

function Round({ round, revision, busy, blocked, assistant }: { round: AssistantRound; revision: number; busy: boolean; blocked: string | null; assistant: ReturnType<typeof useAssistant> }) {
  const [reason, setReason] = useState('');
  const [check, setCheck] = useState<'running' | 'ok' | { error: string }>(round.preview ? 'running' : 'ok');
  const checking = round.status === 'proposed' && check === 'running';
  if (round.kind === 'rollback') {
    return (
      <li className="assistant-round assistant-note" data-round-id={round.id}>
        {round.reply}
      </li>
    );
  }
  return (
    <li className="assistant-round" data-round-id={round.id} data-status={round.status}>
      <p className="assistant-request">{round.kind === 'feedback' ? `Rejected: ${round.request}` : round.request}</p>
      <Steps steps={round.steps} />
      {round.reply && <p className="assistant-reply">{round.reply}</p>}
      {round.error && round.status !== 'stopped' && <p className="assistant-error">{round.error}</p>}
      {round.status === 'stopped' && <p className="hint">Stopped; nothing of this round was kept.</p>}
      {round.changes.length > 0 && (
        <section className="assistant-card" aria-label={`Change card: ${count(round.changes.length, 'change')}`}>
          <header className="row">
            <h3>Change card · {count(round.changes.length, 'change')}</h3>
            <span className={`badge status-${round.status}`}>
              {STATUS_LABELS[round.status]}
              {round.appliedRevision ? ` · revision ${round.appliedRevision}` : ''}
            </span>
          </header>
          <ul className="assistant-changes">
            {round.changes.map((change, i) => (
              <Change key={i} change={change} />
            ))}
          </ul>
          {round.reason && round.status === 'rejected' && <p className="hint">Rejected: {round.reason}</p>}
          {round.status === 'proposed' && round.preview && (
            <RuntimeCheck
              round={round}
              onResult={(result) => {
                setCheck(result);
                if (result !== 'ok') void assistant.rejectAndRevise(round.id, `The interface of this card fails at runtime in the studio's sandbox preview: ${result.error}. Fix it.`);
              }}
            />
          )}
          {checking && (
            <p role="status" className="assistant-working">
              Checking the interface in the sandbox preview…
            </p>
          )}
          {typeof check === 'object' && <p className="assistant-error">The interface failed at runtime ({check.error}); sent back to the assistant.</p>}
          {round.status === 'proposed' && (
            <div className="assistant-decide">
              {blocked && <p className="hint">{blocked}</p>}
              <div className="row">
                <button type="button" disabled={busy || !!blocked || checking || typeof check === 'object'} onClick={() => void assistant.approve(round.id, revision)}>
                  Approve
                </button>
              </div>
              <label className="labelled">
                Reason to reject (sent back to the assistant)
                <textarea rows={2} maxLength={4000} value={reason} onChange={(e) => setReason(e.target.value)} />
              </label>
              <div className="row">
                <button type="button" className="secondary" disabled={busy || !reason.trim()} onClick={() => void assistant.rejectAndRevise(round.id, reason.trim())}>
                  Reject and ask again
                </button>
                <button type="button" className="link" disabled={busy} onClick={() => void assistant.reject(round.id, reason.trim())}>
                  Reject
                </button>
              </div>
            </div>
          )}
          {round.canRollback && (
            <div className="row assistant-rollback">
              <button type="button" className="secondary" disabled={busy || !!blocked} onClick={() => void assistant.rollback(round.id, 'after')}>
                Roll back to this card
              </button>
              <button type="button" className="secondary" disabled={busy || !!blocked} onClick={() => void assistant.rollback(round.id, 'before')}>
                Roll back to before it
              </button>
            </div>
          )}
        </section>
      )}
    </li>
  );
}

function Change({ change }: { change: CardChange }) {
  return (
    <li className={`assistant-change kind-${change.kind}`}>
      <details>
        <summary>{change.summary}</summary>
        <pre className="assistant-diff" aria-label={`Diff: ${change.summary}`}>
          {change.diff.map((line, i) => (
            <span key={i} className={line.type === '+' ? 'add' : line.type === '-' ? 'del' : 'ctx'}>
              {line.type} {line.text}
              {'\n'}
            </span>
          ))}
        </pre>
      </details>
    </li>
  );
}

/** Each provider call of a round: its tokens, its cost, and the operations it checked (refusals went back to the assistant). */
function Steps({ steps }: { steps: AssistantStep[] }) {
  if (steps.length === 0) return null;
  const tokens = steps.reduce((sum, s) => sum + s.tokensIn + s.tokensOut, 0);
  const credits = steps.reduce((sum, s) => sum + s.credits, 0);
  return (
    <ul className="assistant-steps" aria-label="Steps and their cost">
      {steps.length > 1 && (
        <li data-testid="assistant-total">
          In all: {tokens.toLocaleString('en')} tokens · {steps.some((s) => s.source === 'official') ? count(credits, 'credit') : 'no credits'}
        </li>
      )}
      {steps.map((s) => {
        const refused = s.tools.filter((t) => !t.ok);
        return (
          <li key={s.index} data-testid="assistant-step">
            Step {s.index + 1}: {(s.tokensIn + s.tokensOut).toLocaleString('en')} tokens{s.estimated ? ' (estimated)' : ''} ·{' '}
            {s.source === 'official' ? count(s.credits, 'credit') : 'your connection, no credits'}
            {s.tools.length > 0 && ` · ${count(s.tools.length - refused.length, 'operation')} checked`}
            {refused.length > 0 && (
              <details className="assistant-refused">
                <summary>{count(refused.length, 'refused operation')} sent back to the assistant</summary>
                <ul>
                  {refused.map((t, i) => (
                    <li key={i}>
                      <code>{t.name}</code> {t.detail}
                    </li>
                  ))}
                </ul>
              </details>
            )}
          </li>
        );
      })}
    </ul>
  );
}
