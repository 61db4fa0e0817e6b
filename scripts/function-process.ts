import { type ChildProcess, fork } from 'node:child_process';
import { resolve } from 'node:path';
import type { FunctionUrlEvent, FunctionUrlResult, LambdaHandler } from './function-url-event.ts';

/**
 * One function instance in a process of its own (./lambda-runtime.mjs): its module loaded in a
 * fresh `node`, its handler invoked with Function URL events over IPC. The local topology runs
 * each function this way, and the cold-start benchmark times exactly this (start to the first
 * answer). `loader` ['--import', 'tsx'] runs a handler.ts instead of a compiled bundle.
 */
export interface FunctionProcessOptions {
  /** The module: a bundle (dist/functions/<folder>/handler.mjs) or, with the tsx loader, a handler.ts. */
  module: string;
  /** The process's whole environment (as the Lambda's: its settings, nothing inherited). */
  env: Record<string, string | undefined>;
  /** Node flags, e.g. ['--import', 'tsx']. */
  loader?: string[];
  /** What stderr lines go to (default: this process's stderr). */
  onStderr?: (line: string) => void;
  label?: string;
}

const RUNTIME = resolve(import.meta.dirname, 'lambda-runtime.mjs');

type Message = { type: 'ready'; initMs: number } | { type: 'result'; id: number; result: FunctionUrlResult } | { type: 'error'; id: number; message: string };

export class FunctionProcess {
  readonly child: ChildProcess;
  /** Resolves with the module's load time once it is loaded; rejects if the process ends first. */
  readonly ready: Promise<number>;
  #nextId = 1;
  #pending = new Map<number, { resolve: (r: FunctionUrlResult) => void; reject: (e: Error) => void }>();
  #stderr = '';

  constructor(readonly options: FunctionProcessOptions) {
    this.child = fork(RUNTIME, [resolve(options.module)], {
      execArgv: options.loader ?? [],
      env: options.env,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    this.child.stderr!.on('data', (d: Buffer) => {
      const text = d.toString();
      this.#stderr += text;
      for (const line of text.split('\n').filter(Boolean)) (options.onStderr ?? ((l) => process.stderr.write(`${options.label ?? 'function'}: ${l}\n`)))(line);
    });
    this.ready = new Promise<number>((resolveReady, rejectReady) => {
      this.child.on('message', (m: Message) => {
        if (m.type === 'ready') resolveReady(m.initMs);
        else {
          const pending = this.#pending.get(m.id);
          if (!pending) return;
          this.#pending.delete(m.id);
          if (m.type === 'result') pending.resolve(m.result);
          else pending.reject(new Error(m.message));
        }
      });
      this.child.once('exit', (code, signal) => {
        const error = new Error(`${options.label ?? options.module} exited (${signal ?? `code ${code}`})${this.#stderr ? `: ${this.#stderr.trim()}` : ''}`);
        rejectReady(error);
        for (const p of this.#pending.values()) p.reject(error);
        this.#pending.clear();
      });
    });
    this.ready.catch(() => {});
  }

  /** What the process wrote on stderr so far. */
  get stderr(): string {
    return this.#stderr;
  }

  /** Invokes the handler with one event; rejects when the handler throws or the process ends. */
  invoke(event: FunctionUrlEvent): Promise<FunctionUrlResult> {
    if (this.child.exitCode !== null || this.child.signalCode !== null || !this.child.connected) {
      return Promise.reject(new Error(`${this.options.label ?? this.options.module} is not running${this.#stderr ? `: ${this.#stderr.trim()}` : ''}`));
    }
    const id = this.#nextId++;
    return new Promise((resolveResult, reject) => {
      this.#pending.set(id, { resolve: resolveResult, reject });
      this.child.send({ type: 'invoke', id, event });
    });
  }

  /** The handler as the local router calls it. */
  get handler(): LambdaHandler {
    return (event) => this.invoke(event);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }
}
