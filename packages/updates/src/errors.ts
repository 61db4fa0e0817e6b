/** A refusal of the update-record routes, with a stable code and the status it answers with. */
export class UpdatesRefused extends Error {
  constructor(
    readonly statusCode: 400 | 401 | 403 | 404 | 409 | 429,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'UpdatesRefused';
  }
}

export const worldNotFound = () => new UpdatesRefused(404, 'NOT_FOUND', 'No such world.');
export const notAuthor = () => new UpdatesRefused(403, 'NOT_AUTHOR', 'Only the author of this work can change its update records.');
export const updateNotFound = () => new UpdatesRefused(404, 'UPDATE_NOT_FOUND', 'This work has no such update record.');
export const reviewPending = () =>
  new UpdatesRefused(409, 'REVIEW_PENDING', 'This work has a pending review. Resolve the review before adding an update record.');
/**
 * A create request on a work that can notify its players named no notifyPlayers choice: the older
 * behaviour, in which the client asks in a notify dialog and sends the request again with the
 * choice. Nothing is written until then.
 */
export const notifyChoiceRequired = () =>
  new UpdatesRefused(409, 'NOTIFY_CHOICE_REQUIRED', 'Choose whether to notify the players who favorited this work, then add the record again.');
