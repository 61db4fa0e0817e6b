import { useCallback, useEffect, useState } from 'react';
import { type Account, api } from '../lib/api.ts';

export interface AccountView {
  account: Account & { emailVerified: boolean };
  hasPassword: boolean;
  /** An address change waiting for its link to be followed. */
  pendingEmail: string | null;
}

/** Settings' view of the account (GET /api/account), reloadable after a change. */
export function useAccount(): { view: AccountView | null; error: string | null; reload(): Promise<void> } {
  const [view, setView] = useState<AccountView | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(async () => {
    try {
      setView(await api<AccountView>('/api/account'));
    } catch (err) {
      setError((err as Error).message);
    }
  }, []);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { view, error, reload };
}
