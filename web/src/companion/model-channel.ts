/**
 * The model picker hand-off (seed 001 §4 behaviour 4, §6.1). The game tab opens the shared model
 * browser in a separate tab with a random channel name bound to the account; the model browser
 * posts the choice on that same-origin BroadcastChannel; the game tab accepts only a message for
 * its own account and channel and stores the model for the account in this tab's session.
 *
 * Contract for the model browser page (/app/models):
 *   query `pick=<channel>` (random), `account=<accountId>`, `surface=companion` (hide official
 *   billing-source and mix controls; billing preferences are not changed);
 *   on choice: `new BroadcastChannel(pick).postMessage({ type: 'yumina:model-picked', channel: pick, accountId, model })`
 *   (`publishModelChoice` below does exactly that).
 */

export const MODEL_PICK_MESSAGE = 'yumina:model-picked';
const CHANNEL_PREFIX = 'yumina-model-pick-';

export interface ModelPickMessage {
  type: typeof MODEL_PICK_MESSAGE;
  channel: string;
  accountId: string;
  model: string;
}

function randomChannel(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return CHANNEL_PREFIX + Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const storageKey = (accountId: string) => `yumina.companion.model.${accountId}`;

/** The model chosen for this account in this game tab (session only), or null. */
export function sessionModel(accountId: string): string | null {
  try {
    return sessionStorage.getItem(storageKey(accountId));
  } catch {
    return null;
  }
}

export function storeSessionModel(accountId: string, model: string): void {
  try {
    sessionStorage.setItem(storageKey(accountId), model);
  } catch {
    // storage unavailable: the choice lasts as long as the page
  }
}

/** Validates a message from the channel: right type, channel and account, a sane model id. */
export function acceptPick(data: unknown, channel: string, accountId: string): string | null {
  if (!data || typeof data !== 'object') return null;
  const m = data as Partial<ModelPickMessage>;
  if (m.type !== MODEL_PICK_MESSAGE || m.channel !== channel || m.accountId !== accountId) return null;
  if (typeof m.model !== 'string' || !/^[\w./:@-]{1,200}$/.test(m.model)) return null;
  return m.model;
}

export interface ModelPicker {
  channel: string;
  url: string;
  close(): void;
}

/**
 * Opens the model browser in a new tab and listens for the choice. `onPick` runs once per valid
 * message; the listener stays open until `close()` (the player may pick again).
 */
export function openModelPicker(accountId: string, browserPath: string, onPick: (model: string) => void, open: (url: string) => void = (u) => void window.open(u, '_blank')): ModelPicker {
  const channel = randomChannel();
  const bc = new BroadcastChannel(channel);
  bc.onmessage = (event: MessageEvent) => {
    const model = acceptPick(event.data, channel, accountId);
    if (!model) return;
    storeSessionModel(accountId, model);
    onPick(model);
  };
  const url = `${browserPath}?${new URLSearchParams({ pick: channel, account: accountId, surface: 'companion' })}`;
  open(url);
  return { channel, url, close: () => bc.close() };
}

/** For the model browser tab: send the chosen model back to the game tab that opened it. */
export function publishModelChoice(search: string, model: string): boolean {
  const params = new URLSearchParams(search);
  const channel = params.get('pick');
  const accountId = params.get('account');
  if (!channel?.startsWith(CHANNEL_PREFIX) || !accountId) return false;
  const bc = new BroadcastChannel(channel);
  const message: ModelPickMessage = { type: MODEL_PICK_MESSAGE, channel, accountId, model };
  bc.postMessage(message);
  bc.close();
  return true;
}
