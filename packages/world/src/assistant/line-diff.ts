/** One line of a readable diff: added, removed or kept (context). */
export interface DiffLine {
  type: '+' | '-' | ' ';
  text: string;
}

/** Past this many lines on either side, the diff is the whole before removed and the whole after added. */
const LCS_MAX_LINES = 1500;
/** Kept lines shown around a change; longer runs of kept lines fold into one `…` line. */
const CONTEXT = 2;

/** A line diff of two texts (longest common subsequence), unchanged runs folded to a little context. */
export function lineDiff(before: string, after: string): DiffLine[] {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  let lines: DiffLine[];
  if (a.length > LCS_MAX_LINES || b.length > LCS_MAX_LINES) {
    lines = [...a.map((text) => ({ type: '-' as const, text })), ...b.map((text) => ({ type: '+' as const, text }))];
  } else {
    // lengths of the longest common subsequences of the suffixes
    const n = a.length;
    const m = b.length;
    const table = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
    for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) table[i]![j] = a[i] === b[j] ? table[i + 1]![j + 1]! + 1 : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    lines = [];
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[i] === b[j]) {
        lines.push({ type: ' ', text: a[i]! });
        i++;
        j++;
      } else if (i < n && (j >= m || table[i + 1]![j]! >= table[i]![j + 1]!)) lines.push({ type: '-', text: a[i++]! });
      else lines.push({ type: '+', text: b[j++]! });
    }
  }
  // fold long unchanged runs
  const out: DiffLine[] = [];
  const near = (k: number) => lines.slice(Math.max(0, k - CONTEXT), k + CONTEXT + 1).some((l) => l.type !== ' ');
  let folded = false;
  lines.forEach((line, k) => {
    if (line.type !== ' ' || near(k)) {
      out.push(line);
      folded = false;
    } else if (!folded) {
      out.push({ type: ' ', text: '…' });
      folded = true;
    }
  });
  return out;
}
