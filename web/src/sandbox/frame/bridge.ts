/**
 * Frame side of the protocol: the pushed state, remote calls to the parent, and the sandbox API
 * object (`window.yumina`, `useYumina()`), built from the member list in @yumina/sandbox.
 */
import {
  type AiCompleteOptions,
  type FrameMessageBody,
  frameMessage,
  parseParentMessage,
  REMOTE_METHODS,
  type RemoteMethod,
  type RequestMethod,
  resolveAssetUrl,
  type SandboxState,
  type StateKey,
  STATE_KEYS,
} from '@yumina/sandbox';
import { renderMarkdown } from './markdown.ts';

export interface Boot {
  channel: string;
  parentOrigin: string;
  worldId: string;
  worldName: string;
  entryFile: string;
  /** Origin serving the world's assets (also the CSP's img/font/media source). */
  assetOrigin: string;
  href: string;
  storage: { local: Record<string, string>; session: Record<string, string> };
}

export interface ChangeDetail {
  changed: StateKey[];
  changedVariables: string[];
}

type ChangeListener = (state: SandboxState, detail: ChangeDetail) => void;

export class SandboxError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SandboxError';
  }
}

export class Bridge {
  state: SandboxState | null = null;
  /** Signed token for a private world's assets (parent → frame `assets` messages); null: plain URLs. */
  assetToken: string | null = null;
  private nextId = 1;
  private pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; onDelta?: (text: string) => void }>();
  private changeListeners = new Set<ChangeListener>();
  private renderListeners = new Set<() => void>();
  private snapshot: Record<string, unknown> | null = null;
  readonly api: Record<string, unknown>;

  constructor(
    readonly boot: Boot,
    private readonly post: (message: unknown, targetOrigin: string) => void,
  ) {
    this.api = this.buildApi();
  }

  send(body: FrameMessageBody): void {
    this.post(frameMessage(this.boot.channel, body), this.boot.parentOrigin);
  }

  /** A request to the parent; trailing undefined arguments are dropped so optional ones validate. */
  call(method: RequestMethod, args: unknown[], onDelta?: (text: string) => void): Promise<unknown> {
    const list = [...args];
    while (list.length && list[list.length - 1] === undefined) list.pop();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onDelta });
      try {
        this.send({ type: 'request', id, method, args: list });
      } catch (error) {
        this.pending.delete(id);
        reject(new SandboxError('BAD_ARGUMENTS', `yumina.${method}: arguments must be plain data (${String(error)})`));
      }
    });
  }

  /** Handles one raw message event; anything not from the parent or malformed is ignored. */
  receive(data: unknown): void {
    const message = parseParentMessage(data, this.boot.channel);
    if (!message) return;
    if (message.type === 'assets') {
      const modeChanged = (this.assetToken === null) !== (message.token === null);
      this.assetToken = message.token;
      // Going between plain and signed URLs re-renders; a renewed token is used from the next render on.
      if (modeChanged) {
        this.snapshot = null;
        for (const fn of this.renderListeners) fn();
      }
      return;
    }
    if (message.type === 'state') {
      this.state = message.state;
      this.snapshot = null;
      const detail: ChangeDetail = { changed: message.changed, changedVariables: message.changedVariables };
      for (const fn of this.renderListeners) fn();
      this.changeListeners.forEach((fn) => {
        try {
          fn(message.state, detail);
        } catch (error) {
          console.error('yumina.onChange listener failed', error);
        }
      });
      window.dispatchEvent(
        new CustomEvent('yumina:statechange', { detail: { ...detail, state: message.state, variables: message.state.variables } }),
      );
      // A turn that failed (issue 30 A2): its own event, for an interface that shows it.
      if (message.changed.includes('turnError') && message.state.turnError)
        window.dispatchEvent(new CustomEvent('yumina:turnerror', { detail: { ...message.state.turnError } }));
      return;
    }
    const entry = this.pending.get(message.id);
    if (!entry) return;
    if (message.type === 'delta') {
      entry.onDelta?.(message.text);
      return;
    }
    this.pending.delete(message.id);
    if (message.ok) entry.resolve(message.value);
    else entry.reject(new SandboxError(message.error.code, message.error.message));
  }

  subscribeRender = (fn: () => void): (() => void) => {
    this.renderListeners.add(fn);
    return () => this.renderListeners.delete(fn);
  };

  /** The API with the current state folded in; a new object per pushed state (for React). */
  getSnapshot = (): Record<string, unknown> => {
    if (!this.snapshot) this.snapshot = Object.freeze({ ...this.api, ...(this.state ?? {}) });
    return this.snapshot;
  };

  private buildApi(): Record<string, unknown> {
    const api: Record<string, unknown> = {};
    const remote = (method: RemoteMethod) => (...args: unknown[]) => this.call(method, args);
    for (const method of REMOTE_METHODS) {
      if (method.includes('.')) continue;
      api[method] = remote(method);
    }
    api.storage = Object.freeze({
      get: (key: string) => this.call('storage.get', [key]),
      set: (key: string, value: string) => this.call('storage.set', [key, String(value)]),
      remove: (key: string) => this.call('storage.remove', [key]),
    });
    api.ai = Object.freeze({
      complete: async (options: AiCompleteOptions & { onDelta?: (text: string) => void }) => {
        const { onDelta, ...rest } = options ?? ({} as AiCompleteOptions);
        return this.call('ai.complete', [{ ...rest, stream: typeof onDelta === 'function' }], onDelta) as Promise<string>;
      },
    });
    api.copyToClipboard = (text: string) => this.call('copyToClipboard', [String(text)]);
    api.getEntry = (name: string) => this.state?.entries.find((e) => e.name === name || e.id === name) ?? null;
    api.getAudioVolume = (type: 'bgm' | 'sfx') => (type === 'sfx' ? this.state?.sfxVolume : this.state?.bgmVolume) ?? 1;
    api.resolveAssetUrl = (ref: string) => resolveAssetUrl(ref, { origin: this.boot.assetOrigin, worldId: this.boot.worldId, token: this.assetToken });
    api.renderMarkdown = (text: string) => renderMarkdown(text);
    api.onChange = (fn: ChangeListener) => {
      if (typeof fn !== 'function') throw new TypeError('yumina.onChange expects a function');
      this.changeListeners.add(fn);
      return () => this.changeListeners.delete(fn);
    };
    api.offChange = (fn: ChangeListener) => {
      this.changeListeners.delete(fn);
    };
    return Object.freeze(api);
  }

  /** `window.yumina`: the API plus live getters for every state read. */
  liveApi(): Record<string, unknown> {
    const live: Record<string, unknown> = { ...this.api };
    for (const key of STATE_KEYS) {
      Object.defineProperty(live, key, { enumerable: true, get: () => this.state?.[key] });
    }
    return Object.freeze(live);
  }
}
