/**
 * The parent side of the custom-interface sandbox. It compiles the world's rootComponent, builds the
 * frame document, runs it in an iframe with sandbox="allow-scripts allow-forms" (forms reach their
 * submit handlers; the frame's CSP `form-action 'none'` keeps any submission from going anywhere;
 * no allow-same-origin: the frame has an opaque origin), pushes `state` into it on every change, and answers the frame's requests
 * with `handlers` (plus the shims it serves itself: the /api/ fetch proxy and world-scoped storage).
 */
import {
  type AiCompleteOptions,
  changedKeys,
  changedVariables,
  compatAnswer,
  completeState,
  isSandboxState,
  type FetchRequest,
  type FetchResult,
  type FrameMessage,
  type ParentMessageBody,
  type RefusedRequest,
  parentMessage,
  parseFrameMessage,
  planCompatFetch,
  type RemoteArgs,
  type RemoteMethod,
  type RemoteResult,
  type SandboxState,
} from '@yumina/sandbox';
import { type CSSProperties, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { CompileError, classCandidates, compileRootComponent, type RootComponentLike } from './compile.ts';
import { loadFrameRuntime } from './frame-runtime.ts';
import { buildFrameDocument } from './frame-document.ts';
import { storageKey, storageSnapshot } from './world-storage.ts';
import { utilityCss } from './utility-css.ts';

type Awaitable<T> = T | Promise<T>;
/** Methods that answer nothing may return anything (it is ignored); the others must return their result. */
type HandlerResult<R> = undefined extends R ? unknown : Awaitable<R>;

/** What the parent must do for the frame; a missing handler answers NOT_AVAILABLE. */
export type SandboxHandlers = {
  [M in Exclude<RemoteMethod, 'ai.complete'>]?: (...args: RemoteArgs<M>) => HandlerResult<RemoteResult<M>>;
} & {
  /** Streams with onDelta when the world code passed one (options.stream). */
  'ai.complete'?: (options: AiCompleteOptions, onDelta: (text: string) => void) => Awaitable<string>;
};

export interface SandboxWorld {
  id: string;
  name: string;
  rootComponent: (RootComponentLike & { id?: string }) | null;
}

export interface SandboxHostProps {
  world: SandboxWorld;
  state: Partial<SandboxState>;
  handlers: SandboxHandlers;
  /** Origin that may serve images, fonts and media to the frame (CSP); default: this page's origin. */
  assetOrigin?: string;
  /**
   * Signed token of this world for a private world's assets (from `useAssetScope`): the frame's
   * `resolveAssetUrl` adds it, since the frame's opaque origin sends no session cookie. A new token
   * reaches the running frame without rebuilding it. null/absent: plain (public) asset URLs.
   */
  assetToken?: string | null;
  className?: string;
  style?: CSSProperties;
  title?: string;
  onFrameError?: (message: string) => void;
}

function randomChannel(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function errorBody(error: unknown): { code: string; message: string } {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string')
    return { code: error.code, message: error instanceof Error ? error.message : String(error) };
  return { code: 'HANDLER_FAILED', message: error instanceof Error ? error.message : String(error) };
}

/** Only plain data goes back into the frame. */
function plain(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

export function SandboxHost(props: SandboxHostProps) {
  const { world, state, className, title } = props;
  const assetOrigin = props.assetOrigin ?? window.location.origin;
  const assetToken = props.assetToken ?? null;
  const frameRef = useRef<HTMLIFrameElement | null>(null);
  const [built, setBuilt] = useState<{ channel: string; html: string } | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const readyRef = useRef(false);
  const sentRef = useRef<SandboxState | null>(null);
  /** Load events per built document (by channel): a late load of a replaced frame never counts against the new one. */
  const loadsRef = useRef(new Map<string, number>());

  // Latest props for the message handler, without re-subscribing.
  const latest = useRef(props);
  latest.current = props;
  const fullState = useMemo(() => completeState(state, world), [state, world]);
  const stateRef = useRef(fullState);
  stateRef.current = fullState;

  // Build the document whenever the world's code (or the asset origin) changes.
  const root = world.rootComponent;
  useEffect(() => {
    let cancelled = false;
    setBuilt(null);
    setFailure(null);
    readyRef.current = false;
    sentRef.current = null;
    if (!root) {
      setFailure('This world has no custom interface.');
      return;
    }
    (async () => {
      const { script, entryFile } = compileRootComponent(root);
      const [runtime, css] = await Promise.all([loadFrameRuntime(), utilityCss(classCandidates(root))]);
      const channel = randomChannel();
      const html = await buildFrameDocument({
        runtime,
        modules: script,
        css,
        assetOrigin,
        boot: {
          channel,
          parentOrigin: window.location.origin,
          worldId: world.id,
          worldName: world.name,
          entryFile,
          assetOrigin: new URL(assetOrigin).origin,
          href: window.location.href,
          storage: { local: storageSnapshot('local', world.id), session: storageSnapshot('session', world.id) },
        },
      });
      if (!cancelled) setBuilt({ channel, html });
    })().catch((error: unknown) => {
      if (cancelled) return;
      setFailure(error instanceof CompileError ? `The interface could not be compiled: ${error.message}` : String(error));
    });
    return () => {
      cancelled = true;
    };
  }, [root, world.id, world.name, assetOrigin]);

  const post = useCallback(
    (body: ParentMessageBody) => {
      const target = frameRef.current?.contentWindow;
      if (!target || !built) return;
      // The frame's origin is opaque ("null"), so '*' is the only target origin that reaches it.
      target.postMessage(parentMessage(built.channel, body), '*');
    },
    [built],
  );

  const pushState = useCallback(() => {
    if (!readyRef.current) return;
    const next = stateRef.current;
    const before = sentRef.current;
    const changed = changedKeys(before, next);
    if (before && changed.length === 0) return;
    sentRef.current = next;
    const data = plain(next);
    if (!isSandboxState(data)) console.error('SandboxHost: the state prop does not fit SandboxState; the frame will drop it', data);
    post({ type: 'state', state: data as SandboxState, changed, changedVariables: changedVariables(before?.variables ?? {}, next.variables) });
  }, [post]);

  // A renewed (or first) asset token goes to the running frame; 'ready' sends the current one too.
  useEffect(() => {
    if (readyRef.current) post({ type: 'assets', token: assetToken });
  }, [assetToken, post]);

  // Note: a new fullState is the trigger; pushState reads it from stateRef
  useEffect(() => {
    pushState();
  }, [fullState, pushState]);

  /**
   * The compatibility fetch (@yumina/sandbox compat-fetch.ts): a read of the open world or session
   * (or the player's models), requested anew from checked parts with the player's credentials;
   * the frame gets the route's documented fields, never the server's body.
   */
  const handleFetch = useCallback(async (request: FetchRequest): Promise<FetchResult> => {
    const scope = { origin: window.location.origin, worldId: latest.current.world.id, sessionId: stateRef.current.sessionId };
    const plan = planCompatFetch(request.method, request.url, scope);
    if (!plan.ok) throw Object.assign(new Error(plan.reason), { code: 'FETCH_NOT_ALLOWED' });
    if (request.body !== null) throw Object.assign(new Error('a GET request carries no body'), { code: 'FETCH_NOT_ALLOWED' });
    const res = await fetch(plan.path, { method: 'GET', headers: { accept: 'application/json' }, credentials: 'same-origin', redirect: 'error', cache: 'no-store' });
    const body: unknown = await res.json().catch(() => undefined);
    const answer = compatAnswer(plan.route, res.status, body);
    return {
      status: answer.status,
      statusText: answer.status === res.status ? res.statusText : '',
      headers: [['content-type', 'application/json; charset=utf-8']],
      body: JSON.stringify(answer.body),
    };
  }, []);

  const onMessage = useCallback(
    async (message: FrameMessage | RefusedRequest) => {
      const current = latest.current;
      switch (message.type) {
        case 'refused':
          // Arguments of the wrong form (an id that is not one, a path off this site): answered, never run.
          post({ type: 'response', id: message.id, ok: false, error: message.error });
          return;
        case 'ready':
          readyRef.current = true;
          sentRef.current = null;
          // The asset token first: the world's code first renders when the state arrives.
          post({ type: 'assets', token: current.assetToken ?? null });
          pushState();
          return;
        case 'error':
          current.onFrameError?.(message.message);
          return;
        case 'storage': {
          const area = message.area === 'local' ? window.localStorage : window.sessionStorage;
          const id = current.world.id;
          if (message.op === 'clear') {
            for (const key of Object.keys(storageSnapshot(message.area, id))) area.removeItem(storageKey(message.area, id, key));
          } else if (message.op === 'set') area.setItem(storageKey(message.area, id, message.key!), message.value!);
          else area.removeItem(storageKey(message.area, id, message.key!));
          return;
        }
        case 'request': {
          const { id, method, args } = message;
          try {
            let value: unknown;
            if (method === 'fetch') value = await handleFetch(args[0] as FetchRequest);
            else if (method === 'ai.complete') {
              const handler = current.handlers['ai.complete'];
              if (!handler) throw Object.assign(new Error('ai.complete is not available here'), { code: 'NOT_AVAILABLE' });
              const options = args[0] as AiCompleteOptions;
              value = await handler(options, (text) => {
                if (options.stream) post({ type: 'delta', id, text: String(text) });
              });
            } else {
              const handler = current.handlers[method] as ((...a: unknown[]) => unknown) | undefined;
              if (!handler) throw Object.assign(new Error(`${method} is not available here`), { code: 'NOT_AVAILABLE' });
              value = await handler(...args);
            }
            post({ type: 'response', id, ok: true, value: plain(value) });
          } catch (error) {
            post({ type: 'response', id, ok: false, error: errorBody(error) });
          }
          return;
        }
      }
    },
    [handleFetch, post, pushState],
  );

  useEffect(() => {
    if (!built) return;
    const listener = (event: MessageEvent) => {
      const frame = frameRef.current?.contentWindow;
      if (!frame || event.source !== frame || event.origin !== 'null') return;
      const message = parseFrameMessage(event.data, built.channel);
      if (message) void onMessage(message);
    };
    window.addEventListener('message', listener);
    return () => window.removeEventListener('message', listener);
  }, [built, onMessage]);

  // Any navigation of the frame is a violation: the page's policy (frame-src 'none', @yumina/sandbox
  // host-policy.ts) makes the browser refuse it, and the frame is torn down and shown as stopped.
  useEffect(() => {
    if (!built) return;
    const onViolation = (event: SecurityPolicyViolationEvent) => {
      if (event.effectiveDirective !== 'frame-src' && event.effectiveDirective !== 'child-src') return;
      readyRef.current = false;
      setBuilt(null);
      setFailure('The interface tried to navigate away and was stopped.');
    };
    document.addEventListener('securitypolicyviolation', onViolation);
    return () => document.removeEventListener('securitypolicyviolation', onViolation);
  }, [built]);

  if (failure)
    return (
      <div role="alert" className="sandbox-error" data-testid="sandbox-error">
        {failure}
      </div>
    );
  if (!built) return <div className={className} data-testid="sandbox-loading" aria-busy="true" />;
  return (
    <iframe
      key={built.channel}
      ref={frameRef}
      title={title ?? `${world.name} interface`}
      className={className}
      style={props.style ?? { width: '100%', height: '70vh', border: 0, display: 'block' }}
      data-testid="sandbox-frame"
      sandbox="allow-scripts allow-forms"
      referrerPolicy="no-referrer"
      allow="clipboard-write 'none'; camera 'none'; microphone 'none'; display-capture 'none'; geolocation 'none'"
      srcDoc={built.html}
      onLoad={() => {
        const loads = (loadsRef.current.get(built.channel) ?? 0) + 1;
        loadsRef.current.set(built.channel, loads);
        // A second load of the same document means the frame navigated itself away from it: stop it.
        if (loads > 1) {
          readyRef.current = false;
          setBuilt(null);
          setFailure('The interface tried to navigate away and was stopped.');
        }
      }}
    />
  );
}
