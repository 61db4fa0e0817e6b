/**
 * A strict reader of the Prometheus text format 0.0.4: throws on anything malformed (sample before
 * its HELP/TYPE, bad label syntax, non-cumulative buckets, missing +Inf/_sum/_count). For tests of
 * GET /metrics.
 */
export interface PrometheusSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface PrometheusFamily {
  name: string;
  type: string;
  help: string;
  samples: PrometheusSample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

export function parsePrometheus(text: string): Map<string, PrometheusFamily> {
  if (!text.endsWith('\n')) throw new Error('exposition must end with a newline');
  const families = new Map<string, PrometheusFamily>();
  let current: PrometheusFamily | undefined;
  const lines = text.slice(0, -1).split('\n');
  for (const [i, line] of lines.entries()) {
    const where = `line ${i + 1}: ${line}`;
    if (line.startsWith('# HELP ')) {
      const m = /^# HELP (\S+) (.*)$/.exec(line);
      if (!m || !NAME.test(m[1]!)) throw new Error(`bad HELP, ${where}`);
      if (families.has(m[1]!)) throw new Error(`family declared twice, ${where}`);
      current = { name: m[1]!, type: 'untyped', help: m[2]!, samples: [] };
      families.set(current.name, current);
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const m = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (!m || !current || m[1] !== current.name || current.samples.length) throw new Error(`bad TYPE, ${where}`);
      current.type = m[2]!;
      continue;
    }
    if (line.startsWith('#') || line === '') throw new Error(`unexpected line, ${where}`);
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`bad sample, ${where}`);
    const [, name, , body, raw] = m;
    const labels: Record<string, string> = {};
    if (body) {
      const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$)/y;
      let at = 0;
      while (at < body.length) {
        re.lastIndex = at;
        const lm = re.exec(body);
        if (!lm) throw new Error(`bad labels, ${where}`);
        labels[lm[1]!] = lm[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
        at = re.lastIndex;
      }
    }
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : raw === 'NaN' ? Number.NaN : Number(raw);
    if (raw !== 'NaN' && Number.isNaN(value)) throw new Error(`bad value, ${where}`);
    if (!current) throw new Error(`sample before HELP/TYPE, ${where}`);
    const base = current.type === 'histogram' ? name!.replace(/_(bucket|sum|count)$/, '') : name;
    if (base !== current.name) throw new Error(`sample outside its family, ${where}`);
    current.samples.push({ name: name!, labels, value });
  }
  for (const f of families.values()) {
    if (f.type !== 'histogram') continue;
    const groups = new Map<string, PrometheusSample[]>();
    for (const s of f.samples) {
      const { le: _le, ...rest } = s.labels;
      const key = JSON.stringify(rest);
      groups.set(key, [...(groups.get(key) ?? []), s]);
    }
    for (const [key, group] of groups) {
      const buckets = group.filter((s) => s.name.endsWith('_bucket'));
      let previousLe = -Infinity;
      let previous = 0;
      for (const b of buckets) {
        const le = b.labels.le === '+Inf' ? Infinity : Number(b.labels.le);
        if (!(le > previousLe) || b.value < previous) throw new Error(`${f.name}${key}: buckets not cumulative`);
        previousLe = le;
        previous = b.value;
      }
      if (previousLe !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
      const count = group.find((s) => s.name.endsWith('_count'));
      if (!count || count.value !== previous) throw new Error(`${f.name}${key}: _count differs from +Inf bucket`);
      if (!group.some((s) => s.name.endsWith('_sum'))) throw new Error(`${f.name}${key}: no _sum`);
    }
  }
  return families;
}
