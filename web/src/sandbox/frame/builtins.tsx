/**
 * Built-in globals for world code (seed 002 §2.9): Chat, MessageList, MessageInput, ChatCanvas,
 * ModelPickerModal, ModelTrigger, useAssetFont, Icons. Small, unstyled-by-default components that
 * accept className and are driven by the sandbox API.
 */
import type { ModelsResult, SandboxMessage } from '@yumina/sandbox';
import { createContext, createElement, type ReactNode, type SVGProps, useContext, useEffect, useState, useSyncExternalStore } from 'react';
import type { Bridge } from './bridge.ts';
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

/** Strips directives ([id: op value]) from what the player reads; rawContent keeps them. */
function visible(content: string): string {
  return content.replace(/\[[a-z0-9][a-z0-9-]*:\s*[^\]\n]*\]/gi, '').trim();
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
  const items: { key: string; message: Pick<SandboxMessage, 'role' | 'content' | 'stateSnapshot'>; streaming: boolean }[] =
    yumina.messages.map((m) => ({ key: m.id, message: m, streaming: m.status === 'streaming' }));
  if (yumina.isStreaming && !yumina.messages.some((m) => m.status === 'streaming'))
    items.push({ key: 'streaming', message: { role: 'assistant', content: yumina.streamingContent, stateSnapshot: null }, streaming: true });
  return (
    <div className={`yumina-messages flex flex-col gap-2 overflow-y-auto ${className ?? ''}`} data-yumina="messages">
      {items.map(({ key, message, streaming }, index) => {
        const content = visible(message.content);
        return (
          <div key={key} data-message-index={index}>
            {render({
              contentHtml: renderMarkdown(content),
              content,
              rawContent: message.content,
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
      <button type="submit" disabled={!canSend || yumina.isStreaming}>
        Send
      </button>
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

export function ModelPickerModal({ open, onClose }: { open: boolean; onClose: () => void }) {
  const yumina = useYumina();
  const [models, setModels] = useState<ModelsResult | null>(null);
  useEffect(() => {
    if (open) yumina.getModels().then(setModels, () => setModels({ models: [], pinnedModels: [], recentlyUsed: [] }));
  }, [open, yumina]);
  if (!open) return null;
  return (
    <div role="dialog" aria-label="Choose a model" className="yumina-model-picker fixed inset-0 flex items-center justify-center">
      <ul>
        {(models?.models ?? []).map((model) => (
          <li key={model.id}>
            <button
              type="button"
              aria-pressed={model.id === yumina.selectedModel}
              onClick={() => {
                void yumina.setModel(model.id).finally(onClose);
              }}
            >
              {model.name}
            </button>
          </li>
        ))}
      </ul>
      <button type="button" onClick={onClose}>
        Close
      </button>
    </div>
  );
}

export function ModelTrigger({ className }: { className?: string }) {
  const yumina = useYumina();
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={className} onClick={() => setOpen(true)}>
        {yumina.selectedModel ?? 'Model'}
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

/** Icons.AnyName is a simple inline SVG glyph, so world code never breaks on an unknown icon. */
const iconCache = new Map<string, (props: SVGProps<SVGSVGElement>) => ReactNode>();
export const Icons: Record<string, (props: SVGProps<SVGSVGElement>) => ReactNode> = new Proxy(
  {},
  {
    get(_target, name) {
      if (typeof name !== 'string') return undefined;
      let icon = iconCache.get(name);
      if (!icon) {
        icon = (props: SVGProps<SVGSVGElement>) =>
          createElement(
            'svg',
            { viewBox: '0 0 24 24', width: '1em', height: '1em', fill: 'none', stroke: 'currentColor', strokeWidth: 2, 'aria-hidden': true, 'data-icon': name, ...props },
            createElement('circle', { cx: 12, cy: 12, r: 8 }),
          );
        iconCache.set(name, icon);
      }
      return icon;
    },
  },
);
