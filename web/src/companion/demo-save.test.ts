import { adventureLevel, boardSave, EMPTY_COMPANION_SAVE, endedAttemptSave, startBoard, stepBoard } from '@yumina/companion';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DemoSaves, fromDocument, saveDocument } from './demo-save.ts';
import { advance, newLawn, placePlant } from './lawn.ts';
import { lawnSnapshot } from './lawn-save.ts';

/** A board of level 24 with a sealed tin bought at 70 s of active play. */
function sealedTinBoard() {
  const lawn = newLawn(24, 1);
  expect(placePlant(lawn, 'sunflower', 0, 0)).toBeNull();
  advance(lawn, 70_000);
  let board = startBoard({ boardId: 'b1', level: adventureLevel(24), cycle: 1, save: EMPTY_COMPANION_SAVE });
  board = { ...board, encounter: { level: 24, cycle: 1, phase: 'sealed', outcome: 'sun', offeredAtMs: 65_000 } };
  return { lawn, board };
}

describe('demo board save document', () => {
  it('holds the companion chunks and the lawn of the same moment; reading it back resumes both', () => {
    const { lawn, board } = sealedTinBoard();
    const back = fromDocument(JSON.parse(JSON.stringify(saveDocument(boardSave(board), lawnSnapshot(lawn)))));
    expect(back.companion.encounter?.phase).toBe('sealed');
    expect(back.lawn?.simMs).toBe(lawn.simMs);
    expect(back.lawn?.sun).toBe(lawn.sun);
    expect(back.lawn?.plants).toEqual(lawn.plants);
    expect(back.lawn?.zombies).toEqual(lawn.zombies);
    expect(back.lawn?.waves).toEqual(lawn.waves);
    // The restored lawn plays on exactly like the original.
    advance(lawn, 30_000);
    advance(back.lawn!, 30_000);
    expect(back.lawn!.zombies).toEqual(lawn.zombies);
    expect(back.lawn!.sun).toBe(lawn.sun);
  });

  it('companion state without its lawn (an older save, or a broken lawn chunk) is a fresh attempt, not a tin at 0 s', () => {
    const { lawn, board } = sealedTinBoard();
    const withoutLawn = fromDocument(saveDocument(boardSave(board), null));
    expect(withoutLawn.lawn).toBeNull();
    expect(withoutLawn.companion.encounter).toBeNull();
    const doc = saveDocument(boardSave(board), lawnSnapshot(lawn));
    const broken = { ...doc, chunks: doc.chunks.map((c) => (c.id === 100 ? { ...c, data: btoa('{"version":1,"simMs":-5}') } : c)) };
    expect(fromDocument(broken)).toMatchObject({ lawn: null, companion: { encounter: null } });
  });

  it('an ended attempt is saved without lawn and without tin; an ended lawn is never saved', () => {
    const { lawn, board } = sealedTinBoard();
    const ended = stepBoard(board, { type: 'level-end', result: 'lost', wallMs: 1 }, { occasionalVisits: true, proactiveComments: false }).board;
    const back = fromDocument(saveDocument(endedAttemptSave(ended), null));
    expect(back).toMatchObject({ lawn: null, companion: { encounter: null, companion: { offers: null } } });
    lawn.result = 'lost';
    expect(lawnSnapshot(lawn)).toBeNull();
  });
});

describe('demo board saves', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('coalesces checkpoints (the newest state wins) and waits out a 429 before writing again', async () => {
    vi.useFakeTimers();
    const bodies: { revision: number; save: { chunks: { id: number }[] } }[] = [];
    const answers = [
      () => new Response(JSON.stringify({ revision: 1 }), { status: 200 }),
      () => new Response(JSON.stringify({ error: { code: 'RATE_LIMITED', message: 'slow down' } }), { status: 429, headers: { 'retry-after': '7' } }),
      () => new Response(JSON.stringify({ revision: 2 }), { status: 200 }),
    ];
    vi.stubGlobal('fetch', async (_url: string, init: RequestInit) => {
      bodies.push(JSON.parse(String(init.body)));
      return answers.shift()!();
    });
    const statuses: string[] = [];
    const saves = new DemoSaves((s) => statuses.push(s));
    const { lawn, board } = sealedTinBoard();
    saves.write(boardSave(board), lawn);
    saves.write(boardSave(board), null);
    saves.write(boardSave(board), lawn); // the newest of the waiting ones
    await vi.advanceTimersByTimeAsync(0);
    expect(bodies).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(3_300);
    expect(bodies).toHaveLength(2); // answered 429: kept, retried after its pause
    expect(bodies[1]!.save.chunks.map((c) => c.id)).toContain(100);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(bodies).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(bodies).toHaveLength(3);
    expect(bodies[2]).toMatchObject({ revision: 1 });
    expect(saves.revision).toBe(2);
    expect(statuses.at(-1)).toBe('saved');
  });
});
