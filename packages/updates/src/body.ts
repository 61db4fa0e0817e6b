import { z } from 'zod';

export const TITLE_MAX = 200;
export const CONTENT_MAX = 10_000;

const title = z.string().trim().min(1, 'a title is required').max(TITLE_MAX);
const content = z.string().max(CONTENT_MAX);

/**
 * POST body: a standalone record. `isMajor` is required (seed 001 §4: a boolean fixed at creation,
 * so the author always decides it; never defaulted). A form that showed the notify checkbox sends
 * that explicit notifyPlayers choice (default off). Omitting it keeps the older behaviour of a
 * notify dialog: on a work that can notify, the request is refused with NOTIFY_CHOICE_REQUIRED
 * (nothing written) and the client asks; on a work that cannot notify yet, the record is added
 * without notification.
 */
export const createUpdateBody = z.strictObject({
  title,
  content: content.optional().default(''),
  isMajor: z.boolean({ error: (issue) => (issue.input === undefined ? 'isMajor is required (true or false)' : 'must be true or false') }),
  notifyPlayers: z.boolean().optional(),
});
export type CreateUpdateInput = z.output<typeof createUpdateBody>;

/** PATCH body: title and content only; anything else (isMajor, timestamp, worldId…) is refused. */
export const editUpdateBody = z.strictObject({
  title,
  content: content.optional(),
});
export type EditUpdateInput = z.output<typeof editUpdateBody>;
