export type DiffLine = { op: 'same' | 'add' | 'del'; text: string };

/**
 * A line diff (longest common subsequence) of two texts, with the common head and tail trimmed
 * first so a small edit of a large world stays cheap. Beyond `limit` changed lines on either side
 * the middle is shown as all removed then all added (still correct, only less minimal).
 */
export function lineDiff(before: string, after: string, limit = 2500): DiffLine[] {
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const x = a.slice(head, a.length - tail);
  const y = b.slice(head, b.length - tail);
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: 'same', text }));
  if (x.length > limit || y.length > limit) {
    out.push(...x.map((text): DiffLine => ({ op: 'del', text })), ...y.map((text): DiffLine => ({ op: 'add', text })));
  } else {
    // lcs[i][j]: the common subsequence length of x[i..] and y[j..].
    const lcs = Array.from({ length: x.length + 1 }, () => new Uint32Array(y.length + 1));
    for (let i = x.length - 1; i >= 0; i--) {
      for (let j = y.length - 1; j >= 0; j--) lcs[i]![j] = x[i] === y[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
    let i = 0;
    let j = 0;
    while (i < x.length && j < y.length) {
      if (x[i] === y[j]) {
        out.push({ op: 'same', text: x[i]! });
        i++;
        j++;
      } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: 'del', text: x[i++]! });
      else out.push({ op: 'add', text: y[j++]! });
    }
    while (i < x.length) out.push({ op: 'del', text: x[i++]! });
    while (j < y.length) out.push({ op: 'add', text: y[j++]! });
  }
  out.push(...a.slice(a.length - tail).map((text): DiffLine => ({ op: 'same', text })));
  return out;
}

/** The changed lines with `context` unchanged lines around each change; gaps become one "…" line. */
export function withContext(lines: DiffLine[], context = 3): (DiffLine | { op: 'gap'; text: string })[] {
  const keep = new Uint8Array(lines.length);
  lines.forEach((l, i) => {
    if (l.op !== 'same') for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = 1;
  });
  const out: (DiffLine | { op: 'gap'; text: string })[] = [];
  lines.forEach((l, i) => {
    if (keep[i]) out.push(l);
    else if (out[out.length - 1]?.op !== 'gap') out.push({ op: 'gap', text: '…' });
  });
  return out;
}
