/**
 * Built-in globals for world code (seed 002 §2.9): Chat, MessageList, MessageInput, ChatCanvas,
 * ModelPickerModal, ModelTrigger, useAssetFont, Icons. Small, unstyled-by-default components that
 * accept className and are driven by the sandbox API.
 */
import type { ModelsResult, SandboxMessage, SandboxTurnError } from '@yumina/sandbox';
import { type ComponentType, createContext, createElement, type ReactNode, type SVGProps, useContext, useEffect, useRef, useState, useSyncExternalStore } from 'react';
import type { Bridge } from './bridge.ts';
import { displayedText } from '@yumina/world/directives';
import { ICON_SET } from './icon-set.ts';
import { renderMarkdown } from './markdown.ts';

let bridge: Bridge | null = null;
export function attachBuiltins(b: Bridge): void {
  bridge = b;
}

type Api = Record<string, unknown> & {
  messages: SandboxMessage[];
  variables: Record<string, unknown>;
  isStreaming: boolean;
  streamingContent: string;
  sendMessage(text: string): Promise<unknown>;
  getModels(): Promise<ModelsResult>;
  setModel(id: string): Promise<unknown>;
  selectedModel: string | null;
  resolveAssetUrl(ref: string): string;
  turnError: SandboxTurnError | null;
  regenerateMessage(id: string): Promise<unknown>;
  continueLastMessage(): Promise<unknown>;
  navigate(path: string): Promise<unknown>;
};

export function useYumina(): Api {
  if (!bridge) throw new Error('useYumina: the sandbox bridge is not ready');
  const b = bridge;
  return useSyncExternalStore(b.subscribeRender, b.getSnapshot) as Api;
}

export interface BubbleProps {
  contentHtml: string;
  content: string;
  rawContent: string;
  role: 'user' | 'assistant' | 'system';
  messageIndex: number;
  isStreaming: boolean;
  stateSnapshot: Record<string, unknown> | null;
  variables: Record<string, unknown>;
  renderMarkdown: (text: string) => string;
}

const BubbleContext = createContext<((props: BubbleProps) => ReactNode) | null>(null);

/**
 * What the player reads of a message: in a reply, the world's own directives (`[<variable id>: …]`,
 * `[audio: …]`, the ids being the keys of `variables`) are removed exactly as the engine does for
 * the stored text; any other bracketed
 * text (`[Note: the air smells of ash]`) is story and stays. The player's own messages are shown
 * as written. rawContent keeps everything.
 */
function visible(content: string, role: BubbleProps['role'], variableIds: readonly string[], streaming: boolean): string {
  // While a reply streams, a directive still arriving at its end is hidden too.
  return role === 'user' ? content : displayedText(content, variableIds, { partial: streaming }).trim();
}

function DefaultBubble(props: BubbleProps) {
  return (
    <div className={`yumina-bubble yumina-bubble-${props.role}`} data-role={props.role}>
      {/* Note: renderMarkdown escapes HTML first */}
      <div dangerouslySetInnerHTML={{ __html: props.contentHtml }} />
    </div>
  );
}

export function Chat({ renderBubble, className, children }: { renderBubble?: (p: BubbleProps) => ReactNode; className?: string; children?: ReactNode }) {
  return (
    <BubbleContext.Provider value={renderBubble ?? null}>
      <div className={`yumina-chat flex flex-col ${className ?? ''}`} data-yumina="chat">
        {children ?? (
          <>
            <MessageList />
            <MessageInput />
          </>
        )}
      </div>
    </BubbleContext.Provider>
  );
}

export function MessageList({ className }: { className?: string }) {
  const yumina = useYumina();
  const render = useContext(BubbleContext) ?? DefaultBubble;
  // The reply being written shows the text streamed so far (its stored row is empty, or the reply it replaces, until it ends).
  const streamed = (m: SandboxMessage) => (m.status === 'streaming' && yumina.isStreaming && yumina.streamingContent ? { ...m, content: yumina.streamingContent, rawContent: yumina.streamingContent } : m);
  const items: { key: string; message: Pick<SandboxMessage, 'role' | 'content' | 'rawContent' | 'stateSnapshot'>; streaming: boolean }[] =
    yumina.messages.map((m) => ({ key: m.id, message: streamed(m), streaming: m.status === 'streaming' }));
  if (yumina.isStreaming && !yumina.messages.some((m) => m.status === 'streaming'))
    items.push({ key: 'streaming', message: { role: 'assistant', content: yumina.streamingContent, stateSnapshot: null }, streaming: true });
  const variableIds = Object.keys(yumina.variables ?? {});
  // The newest message stays in view as messages arrive and a reply streams.
  const list = useRef<HTMLDivElement>(null);
  const newest = yumina.messages.at(-1);
  const tail = `${items.length}:${yumina.streamingContent.length}:${newest?.id}:${newest?.status}:${newest?.content.length}:${newest?.stateSnapshot ? 1 : 0}:${yumina.turnError ? 1 : 0}`;
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [tail]);
  return (
    <div ref={list} className={`yumina-messages flex flex-col gap-2 overflow-y-auto ${className ?? ''}`} data-yumina="messages">
      {items.map(({ key, message, streaming }, index) => {
        const content = visible(message.content, message.role, variableIds, streaming);
        return (
          <div key={key} data-message-index={index}>
            {render({
              contentHtml: renderMarkdown(content),
              content,
              rawContent: message.rawContent ?? message.content,
              role: message.role,
              messageIndex: index,
              isStreaming: streaming,
              stateSnapshot: message.stateSnapshot ?? null,
              variables: yumina.variables,
              renderMarkdown,
            })}
          </div>
        );
      })}
      {yumina.turnError && !yumina.isStreaming ? <TurnErrorNotice /> : null}
    </div>
  );
}

/** The newest turn's failure (issue 30 A2): a notice after the player's message, with Retry and, when the connection is the cause, a way to its settings. */
function TurnErrorNotice() {
  const yumina = useYumina();
  const failure = yumina.turnError!;
  return (
    <div role="alert" data-yumina="turn-error" className="ml-auto max-w-[85%] rounded-xl border border-red-500 p-2 text-sm">
      <strong>No reply:</strong> {failure.message}{' '}
      <button type="button" className="underline" onClick={() => void yumina.regenerateMessage(failure.messageId).catch(() => {})}>
        Retry
      </button>
      {failure.connection ? (
        <>
          {' · '}
          <button type="button" className="underline" onClick={() => void yumina.navigate('/app/settings#ai-config').catch(() => {})}>
            Settings → AI connection
          </button>
        </>
      ) : null}
    </div>
  );
}

export function MessageInput({ className, placeholder }: { className?: string; placeholder?: string }) {
  const yumina = useYumina();
  const [text, setText] = useState('');
  const canSend = Boolean((yumina.capabilities as { canSendMessage?: boolean } | undefined)?.canSendMessage ?? true) && !yumina.readOnly;
  const submit = () => {
    const value = text.trim();
    if (!value || yumina.isStreaming) return;
    setText('');
    void yumina.sendMessage(value).catch((error: Error) => console.error(error));
  };
  // The player's Regenerate and Continue beside this box (the page shows no second one for it):
  // on the newest message when it is a reply of the world, for a player who may change the session.
  const newest = yumina.messages.at(-1);
  const canChange = canSend && (yumina.capabilities as { canUseSessionApis?: boolean } | undefined)?.canUseSessionApis !== false;
  const reply = canChange && newest?.role === 'assistant' ? newest : null;
  return (
    <form
      className={`yumina-input flex gap-2 ${className ?? ''}`}
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <textarea
        aria-label="Message"
        className="flex-1"
        value={text}
        disabled={!canSend}
        placeholder={placeholder ?? 'Say something…'}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            submit();
          }
        }}
      />
      <div className="flex flex-col gap-1" data-yumina="composer-actions">
        <button type="submit" disabled={!canSend || yumina.isStreaming}>
          Send
        </button>
        {reply ? (
          <div className="flex gap-1">
            <button
              type="button"
              aria-label="Regenerate"
              title="Regenerate: a new reply in place of this one"
              disabled={yumina.isStreaming}
              onClick={() => void yumina.regenerateMessage(reply.id).catch((error: Error) => console.error(error))}
            >
              ↻
            </button>
            <button
              type="button"
              aria-label="Continue"
              title="Continue: the reply goes on"
              disabled={yumina.isStreaming}
              onClick={() => void yumina.continueLastMessage().catch((error: Error) => console.error(error))}
            >
              »
            </button>
          </div>
        ) : null}
      </div>
    </form>
  );
}

export function ChatCanvas({ className, children }: { className?: string; children?: ReactNode }) {
  return (
    <div className={`yumina-canvas relative h-full w-full ${className ?? ''}`} data-yumina="canvas">
      {children ?? <Chat />}
    </div>
  );
}

/** The model catalogue (getModels): pinned first, then recently used, then all; pin or unpin; choosing calls setModel. */
export function ModelPickerModal({ open, onClose, className }: { open: boolean; onClose: () => void; className?: string }) {
  const yumina = useYumina();
  const [models, setModels] = useState<ModelsResult | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  const [query, setQuery] = useState('');
  const load = () =>
    yumina.getModels().then(
      (m) => {
        setModels(m);
        setFailure(null);
      },
      (e: Error) => setFailure(e.message),
    );
  useEffect(() => {
    if (open) void load();
  }, [open]); // load reads the latest API each time; only opening reloads
  if (!open) return null;
  const all = models?.models ?? [];
  const byId = new Map(all.map((m) => [m.id, m]));
  const match = (m: { id: string; name: string }) => !query || `${m.id} ${m.name}`.toLowerCase().includes(query.toLowerCase());
  const pinned = (models?.pinnedModels ?? []).map((id) => byId.get(id) ?? { id, name: id, provider: '', contextLength: 0 }).filter(match);
  const recent = (models?.recentlyUsed ?? []).filter((id) => !models?.pinnedModels.includes(id)).map((id) => byId.get(id) ?? { id, name: id, provider: '', contextLength: 0 }).filter(match);
  const rest = all.filter((m) => !models?.pinnedModels.includes(m.id) && !models?.recentlyUsed.includes(m.id)).filter(match);
  const pin = (id: string, on: boolean) => void (on ? (yumina.pinModel as (id: string) => Promise<unknown>)(id) : (yumina.unpinModel as (id: string) => Promise<unknown>)(id)).then(load);
  const row = (m: { id: string; name: string; provider: string }, isPinned: boolean) => (
    <li key={m.id} className="flex items-center gap-2" data-model={m.id}>
      <button type="button" className="flex-1 text-left" aria-pressed={m.id === yumina.selectedModel} onClick={() => void yumina.setModel(m.id).finally(onClose)}>
        {m.name} {m.provider ? <small>({m.provider})</small> : null}
      </button>
      <button type="button" aria-label={isPinned ? `Unpin ${m.name}` : `Pin ${m.name}`} onClick={() => pin(m.id, !isPinned)}>
        {isPinned ? 'Unpin' : 'Pin'}
      </button>
    </li>
  );
  return (
    <div role="dialog" aria-label="Choose a model" className={`yumina-model-picker fixed inset-0 flex items-center justify-center ${className ?? ''}`}>
      <div className="yumina-model-picker-panel">
        <input aria-label="Search models" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="Search models" />
        {failure ? <p role="alert">{failure}</p> : null}
        {!models && !failure ? <p>Loading models…</p> : null}
        {pinned.length ? <h4>Pinned</h4> : null}
        <ul aria-label="Pinned models">{pinned.map((m) => row(m, true))}</ul>
        {recent.length ? <h4>Recently used</h4> : null}
        <ul aria-label="Recently used models">{recent.map((m) => row(m, false))}</ul>
        <h4>All models</h4>
        <ul aria-label="All models">{rest.map((m) => row(m, false))}</ul>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
    </div>
  );
}

/** Shows the selected model; opens the picker. */
export function ModelTrigger({ className }: { className?: string }) {
  const yumina = useYumina();
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} data-yumina="model-trigger" onClick={() => setOpen(true)}>
        {yumina.selectedModel ?? 'Choose a model'}
      </button>
      <ModelPickerModal open={open} onClose={() => setOpen(false)} />
    </>
  );
}

/** Loads a font from the world's assets under a family name; returns true once it is ready. */
export function useAssetFont(ref: string, family: string): boolean {
  const [ready, setReady] = useState(false);
  useEffect(() => {
    if (!bridge || !ref || !family) return;
    const resolve = bridge.api.resolveAssetUrl as (r: string) => string;
    const face = new FontFace(family, `url(${JSON.stringify(resolve(ref))})`);
    document.fonts.add(face);
    face.load().then(
      () => setReady(true),
      () => setReady(false),
    );
    return () => {
      document.fonts.delete(face);
    };
  }, [ref, family]);
  return ready;
}

/**
 * Icons.<LucideName> (see icon-set.ts), 1em by default; an unknown name is a neutral circle, so world
 * code never breaks on an icon this set lacks.
 */
const iconCache = new Map<string, (props: SVGProps<SVGSVGElement>) => ReactNode>();
export const Icons: Record<string, (props: SVGProps<SVGSVGElement>) => ReactNode> = new Proxy(
  {},
  {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      let icon = iconCache.get(name);
      if (!icon) {
        const known = (ICON_SET as Record<string, ComponentType<SVGProps<SVGSVGElement> & { size?: number | string }>>)[name];
        icon = known
          ? (props: SVGProps<SVGSVGElement>) => createElement(known, { size: '1em', 'aria-hidden': true, ...({ 'data-icon': name } as SVGProps<SVGSVGElement>), ...props })
          : (props: SVGProps<SVGSVGElement>) =>
              createElement(
                'svg',
                { viewBox: '0 0 24 24', width: '1em', height: '1em', fill: 'none', stroke: 'currentColor', strokeWidth: 2, 'aria-hidden': true, 'data-icon': name, 'data-icon-missing': '', ...props },
                createElement('circle', { cx: 12, cy: 12, r: 8 }),
              );
        iconCache.set(name, icon);
      }
      return icon;
    },
  },
);
