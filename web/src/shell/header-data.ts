import { useCallback, useEffect, useState } from 'react';
import { api } from '../lib/api.ts';

export interface HeaderData {
  unread: number;
  credits: number | null;
  /** Whether the platform's provider is on (then the balance is shown). */
  officialAvailable: boolean;
}

/** Pages that change the balance or the inbox (a turn, ai.complete, billing, grants) ask the header to look again. */
export const refreshHeader = () => window.dispatchEvent(new Event('yumina:header'));

/** The header's live figures for a signed-in account: unread inbox count and credit balance. */
export function useHeaderData(accountId: string | null): HeaderData {
  const [data, setData] = useState<HeaderData>({ unread: 0, credits: null, officialAvailable: false });
  const load = useCallback(() => {
    if (!accountId) {
      setData({ unread: 0, credits: null, officialAvailable: false });
      return;
    }
    void Promise.all([
      api<{ unread: number }>('/api/inbox').catch(() => ({ unread: 0 })),
      api<{ credits: number; officialAvailable: boolean }>('/api/billing').catch(() => null),
    ]).then(([inbox, billing]) => setData({ unread: inbox.unread, credits: billing?.credits ?? null, officialAvailable: !!billing?.officialAvailable }));
  }, [accountId]);
  useEffect(() => {
    load();
    const events = ['yumina:navigate', 'popstate', 'yumina:header', 'focus'];
    for (const e of events) window.addEventListener(e, load);
    // New inbox items arrive from elsewhere (reviews, updates): a slow look now and then. Pages that
    // spend credits (a turn, ai.complete) call refreshHeader themselves.
    const timer = setInterval(load, 30_000);
    return () => {
      for (const e of events) window.removeEventListener(e, load);
      clearInterval(timer);
    };
  }, [load]);
  return data;
}
