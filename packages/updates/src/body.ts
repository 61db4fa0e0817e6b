import { z } from 'zod';

export const TITLE_MAX = 200;
export const CONTENT_MAX = 10_000;

const title = z.string().trim().min(1, 'a title is required').max(TITLE_MAX);
const content = z.string().max(CONTENT_MAX);

/** POST body: a standalone record. notifyPlayers omitted means no notification (default off). */
export const createUpdateBody = z.strictObject({
  title,
  content: content.optional().default(''),
  isMajor: z.boolean().optional().default(false),
  notifyPlayers: z.boolean().optional(),
});
export type CreateUpdateInput = z.output<typeof createUpdateBody>;

/** PATCH body: title and content only; anything else (isMajor, timestamp, worldId…) is refused. */
export const editUpdateBody = z.strictObject({
  title,
  content: content.optional(),
});
export type EditUpdateInput = z.output<typeof editUpdateBody>;
