import { applyNotebookMutation, emptyNotebook, type Notebook, type WriteBase } from '@yumina/companion';
import { describe, expect, it } from 'vitest';
import type { NotebookAnswer } from './companion-api.ts';
import { NotebookWriter, type WritableMutation, type WriteOutcome } from './notebook-writer.ts';

/** A notebook server in memory with the real revision rules, and scripted failures. */
function fakeServer() {
  let stored: Notebook = emptyNotebook();
  const script: ('network' | 500 | 429 | 400)[] = [];
  const calls: { base: WriteBase; op: string }[] = [];
  return {
    get stored() {
      return stored;
    },
    /** Another tab writes meanwhile. */
    otherTab(mutation: WritableMutation) {
      const r = applyNotebookMutation(stored, mutation, stored, 1);
      if (r.status === 'applied') stored = r.notebook;
    },
    fail(...next: ('network' | 500 | 429 | 400)[]) {
      script.push(...next);
    },
    calls,
    transport: {
      read: async () => stored,
      write: async (base: WriteBase, mutation: WritableMutation): Promise<NotebookAnswer> => {
        calls.push({ base, op: mutation.op });
        const failure = script.shift();
        if (failure === 'network') throw new TypeError('Failed to fetch');
        if (failure) return { ok: false, status: failure, code: 'X', message: `status ${failure}`, notebook: null };
        const r = applyNotebookMutation(stored, mutation, base, 1);
        if (r.status === 'applied') {
          stored = r.notebook;
          return { ok: true, notebook: stored };
        }
        return { ok: false, status: r.status === 'conflict' ? 409 : 400, code: 'NOTEBOOK_CONFLICT', message: r.status, notebook: stored };
      },
    },
  };
}

function writer(server: ReturnType<typeof fakeServer>, held: { nb: Notebook | null }) {
  const problems: WriteOutcome[] = [];
  const sleeps: number[] = [];
  const w = new NotebookWriter({
    transport: server.transport,
    current: () => held.nb,
    onNotebook: (nb) => {
      held.nb = nb;
    },
    onProblem: (o) => problems.push(o),
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  return { w, problems, sleeps };
}

const visit = (key: string): WritableMutation => ({ op: 'record', milestones: [{ key, kind: 'visit', level: 6, cycle: 1 }] });

describe('notebook writer', () => {
  it('a failed write is retried with backoff; the writes queued after it are not dropped', async () => {
    const server = fakeServer();
    const held = { nb: null as Notebook | null };
    const { w, problems, sleeps } = writer(server, held);
    server.fail('network', 500);
    const first = w.enqueue(visit('a'));
    const second = w.enqueue(visit('b'));
    expect((await first).status).toBe('applied');
    expect((await second).status).toBe('applied');
    expect(sleeps).toEqual([500, 1000]);
    expect(problems).toEqual([]);
    expect(server.stored.milestones.map((m) => m.key)).toEqual(['a', 'b']);
    expect(held.nb?.revision).toBe(server.stored.revision);
  });

  it('a write that keeps failing is reported, and the next queued write still goes out', async () => {
    const server = fakeServer();
    const held = { nb: null as Notebook | null };
    const { w, problems, sleeps } = writer(server, held);
    server.fail('network', 'network', 429, 500);
    const lost = w.enqueue(visit('a'));
    const next = w.enqueue(visit('b'));
    expect(await lost).toMatchObject({ status: 'failed', message: 'status 500' });
    expect(await next).toMatchObject({ status: 'applied' });
    expect(sleeps).toEqual([500, 1000, 2000]);
    expect(problems).toEqual([{ status: 'failed', message: 'status 500' }]);
    expect(server.stored.milestones.map((m) => m.key)).toEqual(['b']);
  });

  it('a refusal for what the write is (400) is reported at once, not retried', async () => {
    const server = fakeServer();
    const { w, problems, sleeps } = writer(server, { nb: null });
    server.fail(400);
    expect((await w.enqueue(visit('a'))).status).toBe('refused');
    expect(sleeps).toEqual([]);
    expect(problems).toHaveLength(1);
  });

  it('an outdated additive write is refused by the server, then re-read and re-applied on the current revision', async () => {
    const server = fakeServer();
    const held = { nb: server.stored };
    const { w, problems } = writer(server, held);
    server.otherTab({ op: 'note-add', id: 'other', text: 'from another tab' });
    const out = await w.enqueue({ op: 'note-add', id: 'mine', text: 'mine' });
    expect(out.status).toBe('applied');
    expect(server.calls.map((c) => c.base.revision)).toEqual([0, 1]);
    expect(server.stored.notes.map((n) => n.id)).toEqual(['other', 'mine']);
    expect(problems).toEqual([]);
  });

  it('an outdated destructive write is not re-applied: the fresh notebook is handed back for the player to decide', async () => {
    const server = fakeServer();
    server.otherTab({ op: 'note-add', id: 'first', text: 'one' });
    const held = { nb: server.stored };
    const { w, problems } = writer(server, held);
    server.otherTab({ op: 'note-add', id: 'newer', text: 'added elsewhere' });
    const out = await w.enqueue({ op: 'reset' });
    expect(out.status).toBe('conflict');
    expect(server.calls).toHaveLength(1);
    expect(server.stored.notes.map((n) => n.id)).toEqual(['first', 'newer']);
    expect(held.nb?.revision).toBe(server.stored.revision);
    expect(problems.map((p) => p.status)).toEqual(['conflict']);
  });
});
