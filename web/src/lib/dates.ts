/**
 * Dates in the app's lists (sessions, worlds, reviews, ledger, history), in English like the rest of
 * its text: "27 Nov 2026" and "27 Nov 2026, 14:05" (local time). (A work's update history keeps
 * the work's own language through Intl.) Written without Intl on purpose: a page's first
 * `toLocaleDateString()` loads the browser's date-formatting data, 65 ms on the main thread on a
 * 2-core machine before any slowdown (four times that on Lighthouse's phone), which put the
 * player's session list and the world page over their blocking-time budgets. The day-month-year
 * order also reads the same in every country, where 11/12 does not.
 */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

const valid = (iso: string | number | Date): Date | null => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
};

/** "27 Nov 2026" (local date); an unreadable value comes back as given. */
export function shortDate(iso: string | number | Date): string {
  const date = valid(iso);
  return date ? `${date.getDate()} ${MONTHS[date.getMonth()]} ${date.getFullYear()}` : String(iso);
}

/** "27 Nov 2026, 14:05" (local time). */
export function shortDateTime(iso: string | number | Date): string {
  const date = valid(iso);
  if (!date) return String(iso);
  return `${shortDate(date)}, ${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}
