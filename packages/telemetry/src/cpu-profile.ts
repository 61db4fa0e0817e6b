import { Session } from 'node:inspector/promises';
import type { Profiler, Runtime } from 'node:inspector';
import { errorCode } from './error-code.ts';
import type { CpuProfileEvent, CpuProfileStack } from './events.ts';
import type { ReplicaIdentity } from './identity.ts';
import type { TelemetrySink } from './sink.ts';

/** RUNTIME_CPU_PROFILE_SECONDS limits (seed §2.1, §8). */
export const CPU_PROFILE_MAX_SECONDS = 180;
export const CPU_PROFILE_SAMPLING_INTERVAL_MS = 10;
export const CPU_PROFILE_TOP_STACKS = 25;
/** Innermost frames kept per stack, to bound the log line. */
export const CPU_PROFILE_MAX_FRAMES = 40;

export class CpuProfileSecondsError extends Error {
  readonly code = 'CPU_PROFILE_SECONDS_INVALID';
  constructor(readonly seconds: unknown) {
    super(
      `RUNTIME_CPU_PROFILE_SECONDS must be a whole number from 0 (off) to ${CPU_PROFILE_MAX_SECONDS}; got ${String(seconds)}`,
    );
  }
}

export class CpuProfileTakenError extends Error {
  readonly code = 'CPU_PROFILE_ALREADY_TAKEN';
  constructor() {
    super('the one-shot CPU profile of this process was already taken');
  }
}

/** Throws CpuProfileSecondsError unless `seconds` is an integer in 0..180. Returns it. */
export function assertCpuProfileSeconds(seconds: number): number {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > CPU_PROFILE_MAX_SECONDS) {
    throw new CpuProfileSecondsError(seconds);
  }
  return seconds;
}

const IGNORED = new Set(['(root)', '(idle)']);

function frameText(frame: Runtime.CallFrame): string {
  const name = frame.functionName || '(anonymous)';
  if (!frame.url) return name;
  return `${name} ${frame.url}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
}

/**
 * The heaviest call stacks of a V8 CPU profile by self samples. Only function names and script
 * locations are read from the profile; no source text is ever requested.
 */
export function heaviestStacks(
  profile: Profiler.Profile,
  limit = CPU_PROFILE_TOP_STACKS,
): { stacks: CpuProfileStack[]; totalSamples: number; idleSamples: number } {
  const byId = new Map<number, Profiler.ProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const hits = new Map<number, number>();
  const samples = profile.samples ?? [];
  if (samples.length) for (const id of samples) hits.set(id, (hits.get(id) ?? 0) + 1);
  else for (const node of profile.nodes) if (node.hitCount) hits.set(node.id, node.hitCount);

  let totalSamples = 0;
  let idleSamples = 0;
  const weights = new Map<string, { samples: number; frames: string[] }>();
  for (const [id, count] of hits) {
    totalSamples += count;
    const leaf = byId.get(id);
    if (!leaf || leaf.callFrame.functionName === '(idle)') {
      idleSamples += count;
      continue;
    }
    const frames: string[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const node = byId.get(cur);
      if (!node || IGNORED.has(node.callFrame.functionName)) continue;
      if (frames.length < CPU_PROFILE_MAX_FRAMES) frames.push(frameText(node.callFrame));
    }
    const key = frames.join('\n');
    const entry = weights.get(key);
    if (entry) entry.samples += count;
    else weights.set(key, { samples: count, frames });
  }
  const busy = Math.max(totalSamples - idleSamples, 1);
  const stacks = [...weights.values()]
    .sort((a, b) => b.samples - a.samples)
    .slice(0, limit)
    .map((s) => ({ samples: s.samples, percent: Math.round((s.samples / busy) * 1000) / 10, frames: s.frames }));
  return { stacks, totalSamples, idleSamples };
}

let taken = false;

export interface CpuProfileOptions {
  identity: ReplicaIdentity;
  /** Ends the sampling early (graceful shutdown); the stacks gathered so far are still logged. */
  signal?: AbortSignal;
}

/**
 * One-shot CPU profile of this process through an in-process inspector session (no debugger port):
 * samples every 10 ms for `seconds`, then logs the 25 heaviest call stacks as one
 * `runtime.cpu_profile` record and disconnects. `seconds` 0 does nothing. Never rejects: a failure
 * is logged as an `error` record and resolves to undefined.
 */
export async function startCpuProfile(
  seconds: number,
  sink: TelemetrySink,
  options: CpuProfileOptions,
): Promise<CpuProfileEvent | undefined> {
  const emit = (event: Parameters<TelemetrySink['emit']>[0]) => {
    try {
      sink.emit(event);
    } catch {
      // never into the application
    }
  };
  let session: Session | undefined;
  try {
    assertCpuProfileSeconds(seconds);
    if (seconds === 0) return undefined;
    if (taken) throw new CpuProfileTakenError();
    taken = true;
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    // The inspector takes microseconds.
    await session.post('Profiler.setSamplingInterval', { interval: CPU_PROFILE_SAMPLING_INTERVAL_MS * 1000 });
    await session.post('Profiler.start');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, seconds * 1000);
      timer.unref();
      function done() {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', done);
        resolve();
      }
      if (options.signal?.aborted) done();
      else options.signal?.addEventListener('abort', done, { once: true });
    });
    const { profile } = await session.post('Profiler.stop');
    await session.post('Profiler.disable');
    const { stacks, totalSamples, idleSamples } = heaviestStacks(profile);
    const event: CpuProfileEvent = {
      type: 'runtime.cpu_profile',
      ...options.identity,
      seconds,
      samplingIntervalMs: CPU_PROFILE_SAMPLING_INTERVAL_MS,
      totalSamples,
      idleSamples,
      stacks,
    };
    emit(event);
    return event;
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const code = errorCode(e);
    emit({
      type: 'error',
      ...options.identity,
      name: e.name,
      message: e.message,
      ...(code ? { code } : {}),
      where: 'cpu-profile',
    });
    return undefined;
  } finally {
    try {
      session?.disconnect();
    } catch {
      // already disconnected
    }
  }
}
