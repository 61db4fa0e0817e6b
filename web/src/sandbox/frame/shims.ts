/**
 * Compatibility shims for older world code (seed 002 §4, §9). They replace the frame's own
 * fetch / XMLHttpRequest / localStorage / sessionStorage / clipboard; the browser already blocks the
 * real ones (opaque origin, CSP connect-src 'none'), the shims only give old code something that works.
 */
import type { FetchResult } from '@yumina/sandbox';
import { type Bridge, SandboxError } from './bridge.ts';

function blocked(message: string): TypeError {
  return new TypeError(`Blocked by the Yumina sandbox: ${message}`);
}

/**
 * fetch for the reads the page forwards (@yumina/sandbox compat-fetch.ts: GET of this world's and
 * the open session's routes, the player's models, the version). The page decides, from the URL and
 * method alone: no header and no body is sent on. A refusal rejects with a TypeError (what fetch
 * rejects with when a request cannot be made) whose `code` is FETCH_NOT_ALLOWED and whose message
 * says why; an answer of the platform, an error included, resolves as a Response with JSON.
 */
function installFetch(bridge: Bridge): void {
  const shim = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const method = (init.method ?? (typeof input === 'object' && 'method' in input ? input.method : 'GET')).toUpperCase();
    if ((method === 'GET' || method === 'HEAD') && init.body != null) throw blocked(`fetch(${JSON.stringify(url)}): a ${method} request carries no body`);
    let result: FetchResult;
    try {
      result = (await bridge.call('fetch', [{ url: String(url), method: /^[A-Z]{3,7}$/.test(method) ? method : 'INVALID', headers: [], body: null }])) as FetchResult;
    } catch (error) {
      const code = error instanceof SandboxError ? error.code : 'FETCH_FAILED';
      const message = `fetch(${JSON.stringify(url)}): ${error instanceof Error ? error.message : String(error)}`;
      // A refusal says so; a request the page made that failed (no network, a redirect) is a plain TypeError, as fetch's own.
      throw Object.assign(code === 'FETCH_NOT_ALLOWED' || code === 'BAD_ARGUMENTS' ? blocked(message) : new TypeError(`${message} (the request failed)`), { code });
    }
    return new Response(result.body, { status: result.status, statusText: result.statusText, headers: result.headers });
  };
  Object.defineProperty(window, 'fetch', { value: shim, writable: false, configurable: false });
}

function installXhr(): void {
  class BlockedXMLHttpRequest {
    constructor() {
      throw blocked('XMLHttpRequest is not available; use yumina.* or fetch("/api/…") for the forwarded reads');
    }
  }
  Object.defineProperty(window, 'XMLHttpRequest', { value: BlockedXMLHttpRequest, writable: false, configurable: false });
}

/** A Storage-like object scoped to this world; writes are mirrored to the parent, which persists them. */
function scopedStorage(bridge: Bridge, area: 'local' | 'session', initial: Record<string, string>): Storage {
  const data = new Map(Object.entries(initial));
  const methods = {
    get length() {
      return data.size;
    },
    key: (index: number) => [...data.keys()][index] ?? null,
    getItem: (key: string) => data.get(String(key)) ?? null,
    setItem: (key: string, value: string) => {
      data.set(String(key), String(value));
      bridge.send({ type: 'storage', area, op: 'set', key: String(key), value: String(value) });
    },
    removeItem: (key: string) => {
      data.delete(String(key));
      bridge.send({ type: 'storage', area, op: 'remove', key: String(key) });
    },
    clear: () => {
      data.clear();
      bridge.send({ type: 'storage', area, op: 'clear' });
    },
  };
  return new Proxy(methods as unknown as Storage, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && !(prop in target)) return data.get(prop);
      return Reflect.get(target, prop, receiver);
    },
    set(target, prop, value) {
      if (typeof prop !== 'string' || prop in target) return false;
      methods.setItem(prop, value);
      return true;
    },
    deleteProperty(target, prop) {
      if (typeof prop === 'string' && !(prop in target)) methods.removeItem(prop);
      return true;
    },
    ownKeys: () => [...data.keys()],
    getOwnPropertyDescriptor(_target, prop) {
      if (typeof prop === 'string' && data.has(prop)) return { value: data.get(prop), enumerable: true, configurable: true, writable: true };
      return undefined;
    },
    has: (target, prop) => (typeof prop === 'string' && data.has(prop)) || prop in target,
  });
}

function installStorage(bridge: Bridge): void {
  const local = scopedStorage(bridge, 'local', bridge.boot.storage.local);
  const session = scopedStorage(bridge, 'session', bridge.boot.storage.session);
  Object.defineProperty(window, 'localStorage', { value: local, writable: false, configurable: false, enumerable: true });
  Object.defineProperty(window, 'sessionStorage', { value: session, writable: false, configurable: false, enumerable: true });
}

function installClipboard(bridge: Bridge): void {
  const clipboard = Object.freeze({
    writeText: (text: string) => bridge.call('copyToClipboard', [String(text)]).then(() => undefined),
    readText: () => Promise.reject(new DOMException('Reading the clipboard is not allowed', 'NotAllowedError')),
  });
  Object.defineProperty(navigator, 'clipboard', { value: clipboard, configurable: false });
}

/**
 * A synthetic `location` handed to world modules (the real one cannot be replaced): it reads as the
 * page the player is on, and assigning a same-origin path asks the parent to navigate.
 */
export function syntheticLocation(bridge: Bridge): Location {
  let url = new URL(bridge.boot.href);
  const go = (target: string | URL) => {
    const next = new URL(String(target), url);
    if (next.origin !== url.origin) throw blocked(`navigation to ${next.origin} is not allowed`);
    if (next.pathname === url.pathname && next.search === url.search && next.hash !== url.hash) {
      url = next;
      return;
    }
    void bridge.call('navigate', [next.pathname + next.search + next.hash]).catch(() => undefined);
  };
  const location = {
    get href() {
      return url.href;
    },
    set href(value: string) {
      go(value);
    },
    get origin() {
      return url.origin;
    },
    get protocol() {
      return url.protocol;
    },
    get host() {
      return url.host;
    },
    get hostname() {
      return url.hostname;
    },
    get port() {
      return url.port;
    },
    get pathname() {
      return url.pathname;
    },
    set pathname(value: string) {
      go(new URL(value, url).pathname);
    },
    get search() {
      return url.search;
    },
    get hash() {
      return url.hash;
    },
    set hash(value: string) {
      const next = new URL(url);
      next.hash = value;
      url = next;
    },
    ancestorOrigins: [] as unknown as DOMStringList,
    assign: go,
    replace: go,
    reload: () => undefined,
    toString: () => url.href,
  };
  return location as unknown as Location;
}

/**
 * No WebRTC from the frame. No Content-Security-Policy directive that browsers implement blocks it
 * (the proposed `webrtc 'block'` is unknown to Chromium, which only logs an error for it), and a peer
 * connection's ICE gathering would send STUN packets to any address the world names. So the
 * constructors are replaced before world code runs, and no nested frame (a fresh realm with its own
 * constructors) can be attached to the document.
 */
function installNoWebRtc(): void {
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCIceTransport']) {
    if (!(name in window)) continue;
    class BlockedPeerConnection {
      constructor() {
        throw blocked(`${name} (WebRTC) is not available in a world's interface`);
      }
    }
    Object.defineProperty(window, name, { value: BlockedPeerConnection, writable: false, configurable: false });
  }
  const FRAMES = 'iframe, frame, object, embed, portal, fencedframe';
  const holdsFrame = (node: unknown): boolean =>
    (node instanceof Element && (node.matches(FRAMES) || node.querySelector(FRAMES) !== null)) ||
    (node instanceof DocumentFragment && node.querySelector(FRAMES) !== null);
  const refuse = () => {
    throw blocked('nested frames are not available in a world\'s interface');
  };
  const guardInsert = (proto: object, method: string, nodesOf: (args: unknown[]) => unknown[]) => {
    const original = (proto as Record<string, unknown>)[method] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof original !== 'function') return;
    Object.defineProperty(proto, method, {
      configurable: false,
      writable: false,
      value(this: unknown, ...args: unknown[]) {
        if (nodesOf(args).some(holdsFrame)) refuse();
        return original.apply(this, args);
      },
    });
  };
  guardInsert(Node.prototype, 'appendChild', (a) => [a[0]]);
  guardInsert(Node.prototype, 'insertBefore', (a) => [a[0]]);
  guardInsert(Node.prototype, 'replaceChild', (a) => [a[0]]);
  for (const proto of [Element.prototype, DocumentFragment.prototype, Document.prototype, CharacterData.prototype]) {
    for (const method of ['append', 'prepend', 'before', 'after', 'replaceWith', 'replaceChildren', 'insertAdjacentElement']) {
      if (Object.prototype.hasOwnProperty.call(proto, method)) guardInsert(proto, method, (a) => (method === 'insertAdjacentElement' ? [a[1]] : a));
    }
  }
  // Markup setters: frames the markup made are removed before the setter returns (before any script can reach them).
  const stripFrames = (root: ParentNode | null) => root?.querySelectorAll(FRAMES).forEach((f) => f.remove());
  for (const [proto, key] of [
    [Element.prototype, 'innerHTML'],
    [Element.prototype, 'outerHTML'],
    [ShadowRoot.prototype, 'innerHTML'],
  ] as const) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, key);
    if (!descriptor?.set) continue;
    Object.defineProperty(proto, key, {
      configurable: false,
      get: descriptor.get,
      set(this: Element, value: string) {
        const parent = key === 'outerHTML' ? this.parentElement : this;
        descriptor.set!.call(this, value);
        stripFrames(parent);
      },
    });
  }
  for (const method of ['insertAdjacentHTML', 'setHTMLUnsafe'] as const) {
    const original = (Element.prototype as unknown as Record<string, ((...args: unknown[]) => unknown) | undefined>)[method];
    if (typeof original !== 'function') continue;
    Object.defineProperty(Element.prototype, method, {
      configurable: false,
      writable: false,
      value(this: Element, ...args: unknown[]) {
        const result = original.apply(this, args);
        stripFrames(this.parentElement ?? this);
        return result;
      },
    });
  }
  for (const method of ['write', 'writeln'] as const) {
    Object.defineProperty(Document.prototype, method, { configurable: false, writable: false, value: () => refuse() });
  }
}

/**
 * Forms run their handlers but never submit: the frame has `allow-forms` so an interface's
 * onSubmit (a Send button) works, and a submission itself would navigate the frame, which the
 * host tears down. So `submit()` throws and every submit event is prevented (its handlers still
 * run); the frame's CSP `form-action 'none'` is the second wall.
 */
function installNoFormSubmission(): void {
  Object.defineProperty(HTMLFormElement.prototype, 'submit', {
    value() {
      throw blocked('Submitting a form is not available in a world\'s interface; handle onSubmit instead');
    },
    writable: false,
    configurable: false,
  });
  window.addEventListener('submit', (event) => event.preventDefault(), { capture: true });
}

export function installShims(bridge: Bridge): void {
  installFetch(bridge);
  installXhr();
  installStorage(bridge);
  installClipboard(bridge);
  installNoWebRtc();
  installNoFormSubmission();
}
