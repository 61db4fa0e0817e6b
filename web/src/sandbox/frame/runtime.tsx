/**
 * The frame runtime: bundled as one classic script and inlined (with its CSP hash) into the
 * document the parent builds. It reads the boot data, installs the shims and globals, and then
 * runs the world's modules, which the next inline script hands over through `__yuminaDefine`.
 * It never evaluates a string: world code arrives already compiled, as part of the document.
 */
import * as React from 'react';
import { createRoot } from 'react-dom/client';
import { type Boot, Bridge } from './bridge.ts';
import * as builtins from './builtins.tsx';
import { installShims, syntheticLocation } from './shims.ts';

type ModuleFactory = (module: { exports: Record<string, unknown> }, exports: Record<string, unknown>, require: (id: string) => unknown, location: Location) => void;

const bootElement = document.getElementById('yumina-boot');
const boot = JSON.parse(bootElement?.textContent ?? '{}') as Boot;
bootElement?.remove();
const parentWindow = window.parent;
const bridge = new Bridge(boot, (message, targetOrigin) => parentWindow.postMessage(message, targetOrigin));
builtins.attachBuiltins(bridge);

window.addEventListener('message', (event) => {
  if (event.source !== parentWindow) return;
  bridge.receive(event.data);
});

installShims(bridge);
const location = syntheticLocation(bridge);
const yumina = bridge.liveApi();

const globals: Record<string, unknown> = {
  React,
  yumina,
  useYumina: builtins.useYumina,
  Chat: builtins.Chat,
  MessageList: builtins.MessageList,
  MessageInput: builtins.MessageInput,
  ChatCanvas: builtins.ChatCanvas,
  ModelPickerModal: builtins.ModelPickerModal,
  ModelTrigger: builtins.ModelTrigger,
  useAssetFont: builtins.useAssetFont,
  Icons: builtins.Icons,
};
for (const [name, value] of Object.entries(globals)) {
  Object.defineProperty(window, name, { value, writable: false, configurable: false, enumerable: true });
}

function reportError(error: unknown): void {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  bridge.send({ type: 'error', message });
}
window.addEventListener('error', (event) => reportError(event.error ?? event.message));
window.addEventListener('unhandledrejection', (event) => reportError(event.reason));

/* ---------- modules ---------- */

const EXTENSIONS = ['', '.tsx', '.ts', '.jsx', '.js', '/index.tsx', '/index.ts', '/index.jsx', '/index.js'];
let factories: Record<string, ModuleFactory> = {};
const cache = new Map<string, { exports: Record<string, unknown> }>();

function dirname(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

function join(base: string, relative: string): string {
  const parts = base ? base.split('/') : [];
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  return parts.join('/');
}

/** A bare import (not React, not a sibling) is ignored: its names resolve to the built-in globals. */
const ignoredModule = new Proxy(
  {},
  {
    get(_target, name) {
      if (name === '__esModule') return true;
      if (typeof name !== 'string') return undefined;
      if (name === 'default') return globals.useYumina;
      return globals[name] ?? (window as unknown as Record<string, unknown>)[name];
    },
  },
);

function load(path: string): Record<string, unknown> {
  const cached = cache.get(path);
  if (cached) return cached.exports;
  const factory = factories[path]!;
  const module = { exports: {} as Record<string, unknown> };
  cache.set(path, module);
  factory(module, module.exports, (id) => requireFrom(path, id), location);
  return module.exports;
}

const reactModule = Object.freeze({ ...React, default: React, __esModule: true });

function requireFrom(from: string, id: string): unknown {
  if (id === 'react') return reactModule;
  if (id.startsWith('./') || id.startsWith('../') || id.startsWith('/')) {
    const base = id.startsWith('/') ? '' : dirname(from);
    const target = join(base, id);
    for (const ext of EXTENSIONS) if (factories[target + ext]) return load(target + ext);
    throw new Error(`Cannot find module '${id}' from '${from}'`);
  }
  return ignoredModule;
}

class Boundary extends React.Component<{ children: React.ReactNode }, { error: Error | null }> {
  override state = { error: null as Error | null };
  static getDerivedStateFromError(error: Error) {
    return { error };
  }
  override componentDidCatch(error: Error) {
    reportError(error);
  }
  override render() {
    if (this.state.error)
      return (
        <div role="alert" data-yumina="error" style={{ padding: 16, color: '#fca5a5' }}>
          This interface failed: {this.state.error.message}
        </div>
      );
    return this.props.children;
  }
}

let started = false;
function start(): void {
  if (started || !bridge.state || !Object.keys(factories).length) return;
  started = true;
  const container = document.getElementById('root')!;
  try {
    const entry = load(boot.entryFile);
    const Component = (entry.default ?? Object.values(entry).find((v) => typeof v === 'function')) as React.ComponentType | undefined;
    if (typeof Component !== 'function') throw new Error(`${boot.entryFile} has no default export component`);
    createRoot(container).render(
      <Boundary>
        <Component />
      </Boundary>,
    );
  } catch (error) {
    reportError(error);
    createRoot(container).render(
      <div role="alert" data-yumina="error" style={{ padding: 16, color: '#fca5a5' }}>
        This interface failed: {error instanceof Error ? error.message : String(error)}
      </div>,
    );
  }
}

bridge.subscribeRender(start);

Object.defineProperty(window, '__yuminaDefine', {
  configurable: false,
  value: (modules: Record<string, ModuleFactory>) => {
    if (Object.keys(factories).length) return;
    factories = modules;
    start();
  },
});

bridge.send({ type: 'ready' });
