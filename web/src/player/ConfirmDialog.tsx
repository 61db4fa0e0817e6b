/** A confirmation before something that cannot be undone (restoring a checkpoint, clearing, deleting). */
import { useCallback, useState } from 'react';

/** Asks `message`; `run` on Confirm, `cancel` (when given) on Cancel or when another question replaces this one. */
export type Confirm = (message: string, run: () => unknown, cancel?: () => void) => void;

export function useConfirm(): { confirm: Confirm; dialog: React.ReactNode } {
  const [pending, setPending] = useState<{ message: string; run: () => unknown; cancel?: () => void } | null>(null);
  const confirm = useCallback<Confirm>(
    (message, run, cancel) =>
      setPending((before) => {
        before?.cancel?.();
        return { message, run, cancel };
      }),
    [],
  );
  const dialog = pending ? (
    <div className="confirm-backdrop">
      <div role="alertdialog" aria-modal="true" aria-label="Please confirm" className="card confirm">
        <p>{pending.message}</p>
        <div className="row">
          <button
            type="button"
            autoFocus
            onClick={() => {
              const { run } = pending;
              setPending(null);
              void Promise.resolve(run()).catch(() => {});
            }}
          >
            Confirm
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => {
              pending.cancel?.();
              setPending(null);
            }}
          >
            Cancel
          </button>
        </div>
      </div>
    </div>
  ) : null;
  return { confirm, dialog };
}
