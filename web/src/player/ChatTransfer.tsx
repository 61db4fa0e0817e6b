import { apiPath } from '@yumina/sandbox';
import { useState } from 'react';
import type { Player } from './use-player.ts';

/** What the import answered besides the session: how much came in, and what did not. */
interface ChatImportReport {
  messages: number;
  swipes: number;
  notCarried: string[];
}

/**
 * Chats in and out (issue 49 point 10), beside the session switcher: the session as a SillyTavern
 * chat (.jsonl, which SillyTavern imports, swipes included) or as a readable Markdown transcript,
 * and a SillyTavern chat file read into a new session of this world, with what was not carried said.
 */
export function ChatTransfer({ p }: { p: Player }) {
  const sessionId = p.data?.session.id;
  const worldId = p.data?.session.worldId;
  const [report, setReport] = useState<ChatImportReport | null>(null);
  const [busy, setBusy] = useState(false);
  if (!sessionId || !worldId) return null;

  async function importChat(file: File) {
    setBusy(true);
    setReport(null);
    try {
      const res = await fetch(`${apiPath('worlds', worldId!, 'sessions', 'import')}?name=${encodeURIComponent(file.name.slice(0, 200))}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: file,
        credentials: 'same-origin',
      });
      const body = (await res.json().catch(() => ({}))) as { session?: { id: string }; report?: ChatImportReport; error?: { message: string } };
      if (res.status !== 201 || !body.session || !body.report) {
        p.setError(body.error?.message ?? `The chat could not be imported (${res.status}).`);
        return;
      }
      setReport(body.report);
      await p.loadSessions();
      await p.switchSession(body.session.id);
      p.toast(`Chat imported: ${body.report.messages} messages.`, 'success');
    } catch {
      p.setError('The chat could not be imported (network).');
    } finally {
      setBusy(false);
    }
  }

  return (
    <details className="chat-transfer" data-testid="chat-transfer">
      <summary>Export or import a chat</summary>
      <p className="row">
        <a className="button secondary" href={apiPath('sessions', sessionId, 'export.jsonl')} download>
          Export for SillyTavern (.jsonl)
        </a>
        <a className="button secondary" href={apiPath('sessions', sessionId, 'export.md')} download>
          Export as text (Markdown)
        </a>
      </p>
      <label className="labelled">
        Import a SillyTavern chat (.jsonl) as a new session
        <input
          type="file"
          accept=".jsonl,application/jsonl,application/x-ndjson,text/plain"
          disabled={busy}
          onChange={(event) => {
            const file = event.target.files?.[0];
            event.target.value = '';
            if (file) void importChat(file);
          }}
        />
      </label>
      {report && (
        <div role="status" data-testid="chat-import-report">
          <p>
            Imported {report.messages} messages{report.swipes > 0 ? ` with ${report.swipes} alternative replies (swipes)` : ''}.
          </p>
          {report.notCarried.length === 0 ? (
            <p>Everything in the file was carried.</p>
          ) : (
            <>
              <p>Not carried:</p>
              <ul className="list">
                {report.notCarried.map((line) => (
                  <li key={line}>{line}</li>
                ))}
              </ul>
            </>
          )}
        </div>
      )}
    </details>
  );
}
