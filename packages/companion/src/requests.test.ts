import { describe, expect, it } from 'vitest';
import { applyNotebookMutation, emptyNotebook } from './notebook.ts';
import { bodyWithinLimit, generationRequestSchema, notebookRequestSchema } from './requests.ts';
import { encounterMilestone, lostAttemptMilestone, offerMilestone } from './milestones.ts';

const context = {
  mode: 'adventure',
  level: 12,
  cycle: 1,
  locale: 'en',
  sun: 50,
  wave: { next: 2, total: 10, finalWaveSpawned: false },
  selectedPlants: ['Puff-shroom'],
  lawn: { rows: 5, fogFromColumn: null, plants: [], zombies: [] },
  tin: { phase: 'none' },
  nativeLoss: false,
};

describe('request schemas', () => {
  it('accepts a generation request with account, request, run and board ids and an adventure context', () => {
    const body = { accountId: 'acc_1', requestId: 'r-1', runId: 'run1', boardId: 'b1', message: 'hi', context };
    expect(generationRequestSchema.safeParse(body).success).toBe(true);
    expect(generationRequestSchema.safeParse({ ...body, runId: undefined }).success).toBe(false);
    expect(generationRequestSchema.safeParse({ ...body, extra: true }).success).toBe(false);
    expect(generationRequestSchema.safeParse({ ...body, context: { ...context, mode: 'versus' } }).success).toBe(false);
  });

  it('lets clients send notebook mutations but never dialogue turns or statements', () => {
    const base = { revision: 3, epoch: 0 };
    expect(notebookRequestSchema.safeParse({ base, mutation: { op: 'reset' } }).success).toBe(true);
    expect(notebookRequestSchema.safeParse({ base, mutation: { op: 'introduction', chapter: 'pool', cycle: 1, kind: 'imported' } }).success).toBe(true);
    expect(notebookRequestSchema.safeParse({ base, mutation: { op: 'turns', turns: [] } }).success).toBe(false);
    expect(notebookRequestSchema.safeParse({ base, mutation: { op: 'statement', text: 'I won', level: 1, cycle: 1 } }).success).toBe(false);
  });

  it('checks the 24 KiB and 12 KiB body limits in UTF-8 bytes', () => {
    expect(bodyWithinLimit('generation', 'x'.repeat(24 * 1024))).toBe(true);
    expect(bodyWithinLimit('generation', 'x'.repeat(24 * 1024 + 1))).toBe(false);
    expect(bodyWithinLimit('notebook', '中'.repeat(4096))).toBe(true);
    expect(bodyWithinLimit('notebook', '中'.repeat(4097))).toBe(false);
    expect(bodyWithinLimit('notebook', new Uint8Array(12 * 1024 + 1))).toBe(false);
  });
});

describe('milestones', () => {
  it('record each observed event once, and a lost attempt separately', () => {
    let nb = emptyNotebook();
    const ms = [
      encounterMilestone('tin-bought', 12, 1, 'b1'),
      encounterMilestone('tin-bought', 12, 1, 'b1'),
      offerMilestone({ key: 'offer:12:1:gift', kind: 'gift', level: 12, cycle: 1 }),
      lostAttemptMilestone(12, 1, 'b1'),
    ];
    const r = applyNotebookMutation(nb, { op: 'record', milestones: ms }, nb, 5);
    if (r.status !== 'applied') throw new Error(r.status);
    nb = r.notebook;
    expect(nb.milestones.map((m) => m.kind)).toEqual(['tin-bought', 'offer-gift', 'lost-attempt']);
  });
});
