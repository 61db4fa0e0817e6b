import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompanionNotebookInvalidError } from './errors.ts';
import { NOTEBOOK_BOUNDS } from './limits.ts';
import {
  applyNotebookMutation,
  emptyNotebook,
  fitNotebook,
  type Notebook,
  type NotebookMutation,
  notebookStoredBytes,
  parseNotebook,
  reapplicableMutation,
  scopeNotebook,
} from './notebook.ts';
import { storedJsonBytes, utf8ByteLength } from './text.ts';

const T = 1_700_000_000_000;

function apply(nb: Notebook, m: NotebookMutation, base = { revision: nb.revision, epoch: nb.epoch }) {
  const r = applyNotebookMutation(nb, m, base, T);
  if (r.status !== 'applied') throw new Error(`expected applied, got ${r.status}`);
  return r.notebook;
}

/** Deterministic text generator mixing ASCII, CJK, accents, emoji and JSON-escaped characters. */
function fuzzText(seed: number, length: number): string {
  const alphabet = ['a', 'Z', ' ', '"', '\\', '\n', '中', '文', 'ñ', 'é', '😀', '🌻', '\t', '/', '{'];
  let x = seed >>> 0 || 1;
  let s = '';
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    s += alphabet[(x >>> 0) % alphabet.length];
  }
  return s;
}

describe('notebook bounds', () => {
  it('keeps at most 24 turns, 80 milestones, 8 notes, 8 statements, 30 chapter markers (newest kept)', () => {
    let nb = emptyNotebook();
    for (let i = 0; i < 40; i++) nb = apply(nb, { op: 'turns', turns: [{ role: 'player', text: `turn ${i}`, level: 5, cycle: 1 }] });
    for (let i = 0; i < 100; i++) nb = apply(nb, { op: 'record', milestones: [{ key: `k${i}`, kind: 'visit', level: 5, cycle: 1 }] });
    for (let i = 0; i < 12; i++) nb = apply(nb, { op: 'statement', text: `said ${i}`, level: 5, cycle: 1 });
    for (let c = 1; c <= 8; c++) {
      for (const chapter of ['day', 'night', 'pool', 'fog', 'roof'] as const) nb = apply(nb, { op: 'introduction', chapter, cycle: c, kind: 'first' });
    }
    for (let i = 0; i < 8; i++) nb = apply(nb, { op: 'note-add', id: `n${i}`, text: `note ${i}` });
    const full = applyNotebookMutation(nb, { op: 'note-add', id: 'n9', text: 'one too many' }, nb, T);
    expect(full.status).toBe('invalid');
    expect(full.status === 'invalid' && full.reason).toBe('notes-full');

    expect(nb.turns).toHaveLength(24);
    expect(nb.turns[0]!.text).toBe('turn 16');
    expect(nb.milestones).toHaveLength(80);
    expect(nb.milestones[0]!.key).toBe('k20');
    expect(nb.statements).toHaveLength(8);
    expect(nb.chapters).toHaveLength(30);
    expect(nb.notes).toHaveLength(8);
  });

  it('trims old turns first by UTF-8 bytes to stay within 64 KiB', () => {
    let nb = emptyNotebook();
    nb = apply(nb, { op: 'note-add', id: 'keep', text: 'pinned' });
    for (let i = 0; i < 24; i++) {
      nb = apply(nb, { op: 'turns', turns: [{ role: 'companion', text: '中'.repeat(1300) + i, level: 5, cycle: 1 }] });
      expect(notebookStoredBytes(nb)).toBeLessThanOrEqual(64 * 1024);
    }
    expect(nb.turns.length).toBeLessThan(24);
    expect(nb.turns.at(-1)!.text.endsWith('23')).toBe(true);
    expect(nb.notes).toHaveLength(1);
    // Each turn text was cut to the per-turn byte cap at a character boundary.
    for (const t of nb.turns) expect(utf8ByteLength(t.text)).toBeLessThanOrEqual(NOTEBOOK_BOUNDS.turnTextMaxBytes);
  });

  it('fitNotebook removes milestones only once no turn is left', () => {
    const nb = emptyNotebook();
    nb.turns = [{ role: 'player', text: 'x'.repeat(500), level: 1, cycle: 1, at: T }];
    nb.milestones = Array.from({ length: 80 }, (_, i) => ({ key: `m${i}`, kind: 'visit', level: 1, cycle: 1, at: T, detail: 'd'.repeat(200) }));
    const budget = notebookStoredBytes(nb) - 100;
    const fitted = fitNotebook(nb, budget);
    expect(fitted.turns).toEqual([]);
    expect(fitted.milestones).toHaveLength(80);
    const tighter = fitNotebook(nb, budget - 1_000);
    expect(tighter.milestones.length).toBeLessThan(80);
    expect(notebookStoredBytes(tighter)).toBeLessThanOrEqual(budget - 1_000);
  });
});

describe('64 KiB database constraint under a fuzz of long turns (PGlite jsonb)', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = await PGlite.create();
    await db.exec(`CREATE TABLE nb (id int primary key, data jsonb NOT NULL CHECK (octet_length(data::text) <= 65536))`);
  });
  afterAll(async () => {
    await db.close();
  });

  it('every fitted notebook is accepted by the CHECK and its size estimate bounds the jsonb text', async () => {
    let nb = emptyNotebook();
    for (let i = 0; i < 8; i++) nb = apply(nb, { op: 'note-add', id: `n${i}`, text: fuzzText(i + 900, 400) });
    for (let i = 0; i < 80; i++) {
      nb = apply(nb, { op: 'record', milestones: [{ key: `m${i}`, kind: 'tin-opened-sun', level: 6, cycle: 1, detail: fuzzText(i + 500, 300) }] });
    }
    for (let i = 0; i < 8; i++) nb = apply(nb, { op: 'statement', text: fuzzText(i + 700, 200), level: 6, cycle: 1 });
    await db.query('INSERT INTO nb VALUES (1, $1)', [JSON.stringify(nb)]);
    for (let i = 0; i < 60; i++) {
      const len = 200 + ((i * 7919) % 4000);
      nb = apply(nb, {
        op: 'turns',
        turns: [
          { role: 'player', text: fuzzText(i * 2 + 1, len), level: 6, cycle: 1 },
          { role: 'companion', text: fuzzText(i * 2 + 2, len), level: 6, cycle: 1 },
        ],
      });
      await db.query('UPDATE nb SET data = $1 WHERE id = 1', [JSON.stringify(nb)]);
      const { rows } = await db.query<{ n: number }>('SELECT octet_length(data::text) AS n FROM nb WHERE id = 1');
      expect(rows[0]!.n).toBeLessThanOrEqual(notebookStoredBytes(nb));
      expect(rows[0]!.n).toBeLessThanOrEqual(65_536);
    }
    expect(nb.turns.length).toBeGreaterThan(0);
    // Reading back gives the same notebook.
    const { rows } = await db.query<{ data: unknown }>('SELECT data FROM nb WHERE id = 1');
    expect(parseNotebook(rows[0]!.data)).toEqual(nb);
  });

  it('an unfitted notebook of long turns would violate the constraint (the test can fail)', async () => {
    const nb = emptyNotebook();
    nb.turns = Array.from({ length: 24 }, (_, i) => ({ role: 'player' as const, text: fuzzText(i, 4000), level: 1, cycle: 1, at: T }));
    await expect(db.query('INSERT INTO nb VALUES (2, $1)', [JSON.stringify(nb)])).rejects.toThrow(/check constraint/);
    await db.query('INSERT INTO nb VALUES (2, $1)', [JSON.stringify(fitNotebook(nb))]);
  });

  it('the size estimate equals PostgreSQL’s jsonb text for plain values', async () => {
    for (const value of [{ a: 1, b: [1, 2, 'x"y'], c: { d: '中文😀' } }, [], {}, ['\n\t\\'], { k: [{ z: 'ñ' }, { y: null }] }]) {
      const { rows } = await db.query<{ n: number }>('SELECT octet_length($1::jsonb::text) AS n', [JSON.stringify(value)]);
      expect(storedJsonBytes(value)).toBe(rows[0]!.n);
    }
  });
});

describe('revision handling', () => {
  it('of two writers on the same revision, the second is refused whole and re-applies on the fresh notebook', () => {
    const base = apply(emptyNotebook(), { op: 'note-add', id: 'a', text: 'hello' });
    const seen = { revision: base.revision, epoch: base.epoch };
    const afterTabA = apply(base, { op: 'turns', turns: [{ role: 'player', text: 'from tab A', level: 5, cycle: 1 }] }, seen);
    // Tab B wrote on the same (now outdated) base: refused, nothing of it merged.
    const tabB: NotebookMutation = { op: 'turns', turns: [{ role: 'player', text: 'from tab B', level: 5, cycle: 1 }] };
    const stale = applyNotebookMutation(afterTabA, tabB, seen, T);
    expect(stale).toEqual({ status: 'conflict', reason: 'revision', notebook: afterTabA });
    // The writer re-reads (the conflict carries the current notebook) and re-applies.
    expect(reapplicableMutation(tabB)).toBe(true);
    const afterTabB = apply(stale.notebook, tabB);
    expect(afterTabB.turns.map((t) => t.text)).toEqual(['from tab A', 'from tab B']);
    expect(afterTabB.revision).toBe(base.revision + 2);
  });

  it('an old reply never overwrites a reset', () => {
    const nb = apply(emptyNotebook(), { op: 'turns', turns: [{ role: 'player', text: 'hi', level: 5, cycle: 1 }] });
    const seenByReply = { revision: nb.revision, epoch: nb.epoch };
    const reset = apply(nb, { op: 'reset' });
    expect(reset.turns).toEqual([]);
    expect(reset.epoch).toBe(nb.epoch + 1);
    expect(reset.revision).toBeGreaterThan(nb.revision);
    const late = applyNotebookMutation(reset, { op: 'turns', turns: [{ role: 'companion', text: 'late', level: 5, cycle: 1 }] }, seenByReply, T);
    expect(late).toEqual({ status: 'conflict', reason: 'reset', notebook: reset });
  });

  it('a destructive write from an outdated revision is not applied', () => {
    const nb = apply(apply(emptyNotebook(), { op: 'note-add', id: 'a', text: 'x' }), { op: 'note-add', id: 'b', text: 'y' });
    const stale = { revision: nb.revision - 1, epoch: nb.epoch };
    expect(applyNotebookMutation(nb, { op: 'note-remove', id: 'a' }, stale, T).status).toBe('conflict');
    expect(applyNotebookMutation(nb, { op: 'reset' }, stale, T).status).toBe('conflict');
    expect(apply(nb, { op: 'note-remove', id: 'a' }).notes.map((n) => n.id)).toEqual(['b']);
    // Destructive writes are never re-applied by the writer on its own: the player decides again.
    expect(reapplicableMutation({ op: 'note-remove', id: 'a' })).toBe(false);
    expect(reapplicableMutation({ op: 'reset' })).toBe(false);
  });

  it('records each milestone key once, so a retried write changes nothing', () => {
    const m = { op: 'record' as const, milestones: [{ key: 'offer:12:1:gift', kind: 'gift', level: 12, cycle: 1 }] };
    const once = apply(emptyNotebook(), m);
    expect(applyNotebookMutation(once, m, { revision: 0, epoch: 0 }, T).status).toBe('conflict');
    const retry = applyNotebookMutation(once, m, { revision: once.revision, epoch: once.epoch }, T);
    expect(retry).toMatchObject({ status: 'applied', changed: false });
    expect(retry.notebook.milestones).toHaveLength(1);
    expect(retry.notebook.revision).toBe(once.revision);
  });

  it('introduction markers are remembered per chapter and cycle', () => {
    let nb = apply(emptyNotebook(), { op: 'introduction', chapter: 'night', cycle: 1, kind: 'imported' });
    nb = apply(nb, { op: 'introduction', chapter: 'night', cycle: 1, kind: 'first' });
    nb = apply(nb, { op: 'introduction', chapter: 'night', cycle: 2, kind: 'replay' });
    expect(nb.chapters.map((c) => [c.chapter, c.cycle, c.kind])).toEqual([
      ['night', 1, 'imported'],
      ['night', 2, 'replay'],
    ]);
  });
});

describe('stored text', () => {
  it('removes NUL, control characters and lone surrogates that jsonb rejects', () => {
    const nb = apply(emptyNotebook(), { op: 'turns', turns: [{ role: 'player', text: 'a\u0000b\u0007c\ud800d\n', level: 1, cycle: 1 }] });
    expect(nb.turns[0]!.text).toBe('abc\ufffdd');
  });

  it('rejects an invalid stored notebook with a typed error, and treats null as empty', () => {
    expect(parseNotebook(null)).toEqual(emptyNotebook());
    expect(() => parseNotebook({ version: 2 })).toThrow(CompanionNotebookInvalidError);
  });
});

describe('scoping', () => {
  it('keeps this cycle up to this level; pinned notes stay account-wide', () => {
    let nb = emptyNotebook();
    nb = apply(nb, { op: 'note-add', id: 'p', text: 'call me Sam' });
    for (const [level, cycle] of [
      [3, 1],
      [7, 1],
      [9, 1],
      [3, 2],
    ] as const) {
      nb = apply(nb, { op: 'turns', turns: [{ role: 'player', text: `L${level}C${cycle}`, level, cycle }] });
      nb = apply(nb, { op: 'record', milestones: [{ key: `m${level}${cycle}`, kind: 'visit', level, cycle }] });
      nb = apply(nb, { op: 'statement', text: `s${level}${cycle}`, level, cycle });
    }
    const scoped = scopeNotebook(nb, 7, 1);
    expect(scoped.turns.map((t) => t.text)).toEqual(['L3C1', 'L7C1']);
    expect(scoped.milestones.map((m) => m.key)).toEqual(['m31', 'm71']);
    expect(scoped.statements.map((s) => s.text)).toEqual(['s31', 's71']);
    expect(scoped.notes.map((n) => n.text)).toEqual(['call me Sam']);
    expect(scopeNotebook(nb, 50, 2).turns.map((t) => t.text)).toEqual(['L3C2']);
  });

  it('passes at most 12 dialogue messages, the newest', () => {
    let nb = emptyNotebook();
    for (let i = 0; i < 20; i++) nb = apply(nb, { op: 'turns', turns: [{ role: 'player', text: `t${i}`, level: 5, cycle: 1 }] });
    const turns = scopeNotebook(nb, 5, 1).turns;
    expect(turns).toHaveLength(12);
    expect(turns[0]!.text).toBe('t8');
  });
});
