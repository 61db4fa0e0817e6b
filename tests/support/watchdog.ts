import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

/**
 * Stops a server process when the process that started it dies without stopping it (a crash, a
 * kill, Ctrl-C before teardown): a small `sh` in a process group of its own holds the read end of
 * a pipe whose write end only the starting process has. When that process ends, however it ends,
 * the pipe closes, `cat` returns, and the watchdog signals the server, waits up to 10 s for it to
 * go, kills it, and removes its folder. The orderly path (`cancel`) ends the watchdog first and
 * stops the server itself, so the watchdog never signals a process id that may have been reused.
 */
const SCRIPT = `
cat >/dev/null
kill -s "$1" "$2" 2>/dev/null
i=0
while [ "$i" -lt 100 ] && kill -0 "$2" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done
kill -s KILL "$2" 2>/dev/null
[ -n "$3" ] && rm -rf "$3"
exit 0
`;

export interface Watchdog {
  /** The starting process stops the server itself: the watchdog ends without acting. */
  cancel(): void;
}

/** Watches `pid`: `signal` (then KILL) when the current process dies first; `folder` is removed afterwards. */
export function watchdog(pid: number, signal: 'INT' | 'TERM', folder = ''): Watchdog {
  const child: ChildProcess = spawn('sh', ['-c', SCRIPT, 'watchdog', signal, String(pid), folder], {
    detached: true, // its own process group: Ctrl-C on the terminal reaches the run, not the watchdog
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  const pipe = child.stdin as Writable & { unref?: () => void };
  pipe.on('error', () => {});
  pipe.unref?.();
  child.unref();
  return {
    cancel() {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL'); // its group: the shell and its `cat`
      } catch {
        // already gone
      }
    },
  };
}
