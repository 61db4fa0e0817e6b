import { describe, expect, it } from 'vitest';
import * as companion from './index.ts';

describe('package entry', () => {
  it('exports the rules, notebook, save chunks, context and content', () => {
    for (const name of [
      'stepEncounter',
      'newEncounter',
      'levelGetsInvitation',
      'tinOutcome',
      'acceptOffer',
      'availableOffers',
      'proactiveRefusal',
      'openPanel',
      'closePanel',
      'encodeCompanionSave',
      'decodeCompanionSave',
      'applyNotebookMutation',
      'fitNotebook',
      'acceptQuote',
      'buildPromptContext',
      'buildCompanionMessages',
      'parseCompanionReply',
      'chooseIntroduction',
      'generationRequestSchema',
      'notebookRequestSchema',
      'adventureWaveBudget',
    ]) {
      expect(typeof (companion as Record<string, unknown>)[name], name).not.toBe('undefined');
    }
    const parsed: companion.NotebookRequest = companion.notebookRequestSchema.parse({ base: { revision: 0, epoch: 0 }, mutation: { op: 'reset' } });
    expect(parsed.mutation.op).toBe('reset');
  });
});
