/**
 * /dev/sandbox: mounts the sandbox host with a sample world and fake handlers, for development and
 * the browser tests. Nothing here talks to the server except the host's own /api/ fetch proxy.
 * `window.yuminaDev` lets a test swap the world, change variables and read the handler calls.
 */
import type { SandboxMessage, SandboxState } from '@yumina/sandbox';
import { useEffect, useMemo, useRef, useState } from 'react';
import sample from '../../../packages/world/samples/ashen-depths.json';
import { type SandboxHandlers, SandboxHost, type SandboxWorld } from './SandboxHost.tsx';

interface DevControls {
  calls: { method: string; args: unknown[] }[];
  frameErrors: string[];
  setWorld(world: SandboxWorld): void;
  setVariables(patch: Record<string, unknown>): void;
  state(): Partial<SandboxState>;
}

declare global {
  interface Window {
    yuminaDev?: DevControls;
  }
}

const sampleWorld: SandboxWorld = {
  id: sample.id,
  name: sample.name,
  rootComponent: sample.rootComponent as SandboxWorld['rootComponent'],
};

function defaults(): Record<string, unknown> {
  return Object.fromEntries(sample.variables.map((v) => [v.id, v.defaultValue]));
}

const DEV_SESSION = 'cnv_devsession';

function message(role: SandboxMessage['role'], content: string, variables: Record<string, unknown>): SandboxMessage {
  return {
    // Ids of the platform's form (@yumina/sandbox platform-ids.ts): the protocol refuses any other.
    id: `msg_dev${Math.random().toString(36).slice(2, 10)}`,
    sessionId: DEV_SESSION,
    role,
    content,
    status: 'complete',
    stateSnapshot: { ...variables },
    createdAt: new Date().toISOString(),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export default function DevSandboxPage() {
  const [world, setWorld] = useState<SandboxWorld>(sampleWorld);
  const [state, setState] = useState<Partial<SandboxState>>(() => ({
    variables: defaults(),
    sessionId: DEV_SESSION,
    messages: [message('assistant', 'You stand at the top of the **abbey stairs**.', defaults())],
    entries: [],
    checkpoints: [],
    selectedModel: 'fake-model',
  }));
  const [log, setLog] = useState<string[]>([]);
  const calls = useRef<DevControls['calls']>([]);
  const frameErrors = useRef<string[]>([]);
  const stateRef = useRef(state);
  stateRef.current = state;
  const storage = useRef(new Map<string, string>());

  useEffect(() => {
    window.yuminaDev = {
      calls: calls.current,
      frameErrors: frameErrors.current,
      setWorld,
      setVariables: (patch) => setState((s) => ({ ...s, variables: { ...s.variables, ...patch } })),
      state: () => stateRef.current,
    };
    return () => {
      delete window.yuminaDev;
    };
  }, []);

  const handlers = useMemo<SandboxHandlers>(() => {
    const record = (method: string, args: unknown[]) => {
      calls.current.push({ method, args });
      setLog((l) => [...l.slice(-19), `${method}(${args.map((a) => JSON.stringify(a)).join(', ')})`]);
    };
    const recorded = <A extends unknown[], R>(method: string, fn: (...args: A) => R) => (...args: A) => {
      record(method, args);
      return fn(...args);
    };
    const noop = (method: string) => recorded(method, () => undefined);
    return {
      sendMessage: recorded('sendMessage', async (text: string) => {
        const vars = { ...(stateRef.current.variables ?? {}) };
        setState((s) => ({ ...s, messages: [...(s.messages ?? []), message('user', text, vars)], isStreaming: true, streamingContent: '' }));
        const reply = 'The torch gutters. You find a few coins. [gold: +5]';
        for (let i = 8; i <= reply.length; i += 8) {
          await sleep(15);
          setState((s) => ({ ...s, streamingContent: reply.slice(0, i) }));
        }
        const next = { ...vars, gold: Number(vars.gold ?? 0) + 5 };
        setState((s) => ({ ...s, isStreaming: false, streamingContent: '', variables: next, messages: [...(s.messages ?? []), message('assistant', reply, next)] }));
      }),
      executeAction: recorded('executeAction', (actionId: string) => {
        if (actionId === 'drink-potion')
          setState((s) => ({ ...s, variables: { ...s.variables, hp: Math.min(100, Number(s.variables?.hp ?? 0) + 20) } }));
      }),
      setVariable: recorded('setVariable', (id: string, value: unknown) => {
        setState((s) => ({ ...s, variables: { ...s.variables, [id]: value } }));
      }),
      'ai.complete': recorded('ai.complete', async (_options, onDelta: (text: string) => void) => {
        const parts = ['Hello', ' from', ' the', ' fake', ' model'];
        for (const part of parts) {
          await sleep(5);
          onDelta(part);
        }
        return parts.join('');
      }),
      'storage.get': recorded('storage.get', (key: string) => storage.current.get(key) ?? null),
      'storage.set': recorded('storage.set', (key: string, value: string) => {
        storage.current.set(key, value);
      }),
      'storage.remove': recorded('storage.remove', (key: string) => {
        storage.current.delete(key);
      }),
      getModels: recorded('getModels', () => ({
        models: [{ id: 'fake-model', name: 'Fake model', provider: 'official', contextLength: 8192 }],
        pinnedModels: [],
        recentlyUsed: [],
      })),
      copyToClipboard: noop('copyToClipboard'),
      showToast: noop('showToast'),
      navigate: noop('navigate'),
      playAudio: noop('playAudio'),
      stopAudio: noop('stopAudio'),
      saveCheckpoint: recorded('saveCheckpoint', (name?: string) => ({ id: 'chk_dev1', name: name ?? 'Checkpoint', messageCount: stateRef.current.messages?.length ?? 0, createdAt: new Date().toISOString() })),
    };
  }, []);

  return (
    <section className="dev-sandbox">
      <h1>Sandbox (development)</h1>
      <p>
        <button type="button" onClick={() => window.yuminaDev?.setVariables({ hp: Number(stateRef.current.variables?.hp ?? 0) - 10 })}>
          Lose 10 HP
        </button>{' '}
        <span data-testid="parent-hp">HP {String(state.variables?.hp)}</span>
      </p>
      <SandboxHost
        world={world}
        state={state}
        handlers={handlers}
        title="World interface"
        className="sandbox-frame"
        onFrameError={(m) => {
          frameErrors.current.push(m);
          setLog((l) => [...l.slice(-19), `frame error: ${m}`]);
        }}
      />
      <ol data-testid="handler-log">
        {log.map((line, i) => (
          // Note: an append-only log
          <li key={i}>{line}</li>
        ))}
      </ol>
    </section>
  );
}
