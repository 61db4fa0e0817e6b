import { z } from 'zod';
import { companionContextSchema } from './context.ts';
import { CHAPTERS } from './levels.ts';
import { COMPANION_LIMITS, NOTEBOOK_BOUNDS } from './limits.ts';
import type { NotebookMutation, WriteBase } from './notebook.ts';
import { utf8ByteLength } from './text.ts';

/**
 * Request bodies of the companion routes as strict zod schemas, so the container and the panel
 * share one definition. Size limits are checked on the raw body before parsing (`bodyWithinLimit`).
 */

const id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'an opaque id (letters, digits, _ and -)');

/** POST /api/game/npc/companion */
export const generationRequestSchema = z.strictObject({
  /** Must equal the account id that the config route returned. */
  accountId: z.string().min(1).max(128),
  requestId: id,
  runId: id,
  boardId: id,
  message: z.string().trim().min(1).max(2_000),
  context: companionContextSchema,
  /** A proactive comment rather than a reply to a typed message. */
  proactive: z.boolean().optional(),
  /** The model chosen in the game tab (model browser); the server checks it belongs to the private provider. */
  model: z.string().min(1).max(200).optional(),
  /** Revision and epoch of the notebook as the client last saw it; the reply is written against them. */
  notebook: z.strictObject({ revision: z.number().int().min(0), epoch: z.number().int().min(0) }).optional(),
});
export type GenerationRequest = z.infer<typeof generationRequestSchema>;

const level = z.number().int().min(1).max(50);
const cycle = z.number().int().min(1).max(999);

/** Mutations a client may send; dialogue turns and remembered statements are written by the server only. */
const clientMutation = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('record'),
    milestones: z
      .array(
        z.strictObject({
          key: z.string().min(1).max(128),
          kind: z.string().regex(/^[a-z0-9-]{1,64}$/),
          level,
          cycle,
          detail: z.string().max(NOTEBOOK_BOUNDS.milestoneDetailMaxBytes).optional(),
        }),
      )
      .min(1)
      .max(16),
  }),
  z.strictObject({ op: z.literal('introduction'), chapter: z.enum(CHAPTERS), cycle, kind: z.enum(['first', 'replay', 'imported']) }),
  z.strictObject({ op: z.literal('complete'), cycle }),
  z.strictObject({ op: z.literal('note-add'), id, text: z.string().trim().min(1).max(NOTEBOOK_BOUNDS.noteTextMaxBytes) }),
  z.strictObject({ op: z.literal('note-remove'), id }),
  z.strictObject({ op: z.literal('reset') }),
]);

/** POST /api/game/npc/companion/notebook */
export const notebookRequestSchema = z.strictObject({
  base: z.strictObject({ revision: z.number().int().min(0), epoch: z.number().int().min(0) }),
  mutation: clientMutation,
});
export type NotebookRequest = { base: WriteBase; mutation: NotebookMutation };

/** PUT /api/game/npc/companion/preferences: either switch or both; each is stored on its own. */
export const preferencesRequestSchema = z
  .strictObject({ occasionalVisits: z.boolean().optional(), proactiveComments: z.boolean().optional() })
  .refine((p) => p.occasionalVisits !== undefined || p.proactiveComments !== undefined, 'occasionalVisits or proactiveComments is required');
export type PreferencesRequest = z.infer<typeof preferencesRequestSchema>;

export type CompanionBody = 'generation' | 'notebook';

/** 24 KiB for generation, 12 KiB for notebook requests, in UTF-8 bytes of the raw body. */
export function bodyWithinLimit(kind: CompanionBody, body: string | Uint8Array): boolean {
  const size = typeof body === 'string' ? utf8ByteLength(body) : body.byteLength;
  return size <= (kind === 'generation' ? COMPANION_LIMITS.generationBodyMaxBytes : COMPANION_LIMITS.notebookBodyMaxBytes);
}
