import { createContext, Fragment, type ReactNode, useContext, useEffect, useState } from 'react';

/**
 * Small declarative forms for the simple mode: each object of the world is edited through a list
 * of field specs. Every input carries `data-path` (the validator's path form, such as
 * `entries[3].keywords`) so an issue shown in advanced mode can jump to its field here.
 */
export type Obj = Record<string, unknown>;

export type FieldSpec =
  | { key: string; label: string; kind: 'text' | 'textarea' | 'number' | 'optional-number' | 'nullable-number' | 'checkbox' | 'list' | 'json' }
  | { key: string; label: string; kind: 'select'; options: readonly string[]; optional?: boolean }
  | { key: string; label: string; kind: 'object'; fields: (value: Obj) => FieldSpec[]; nullable?: boolean; create?: () => Obj }
  | { key: string; label: string; kind: 'array'; item: (value: Obj) => FieldSpec[]; create: () => Obj; itemLabel: (value: Obj, index: number) => string };

export const childPath = (base: string, key: string | number) => (typeof key === 'number' ? `${base}[${key}]` : base ? `${base}.${key}` : key);

/** Validation issues by path: each field shows its own beside it. */
export const IssuesContext = createContext<ReadonlyMap<string, string[]>>(new Map());

/** The issues of one path, shown beside its field (announced politely as they change). */
export function FieldIssue({ path }: { path: string }) {
  const messages = useContext(IssuesContext).get(path);
  if (!messages?.length) return null;
  return (
    <span className="field-issue" data-issue-for={path}>
      {messages.join('; ')}
    </span>
  );
}

const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** A comma-separated list input that keeps what is being typed (a trailing comma) until it parses. */
export function ListInput({ value, path, label, onChange, placeholder }: { value: unknown; path: string; label: string; onChange(v: string[]): void; placeholder?: string }) {
  const list = Array.isArray(value) ? value.map(String) : [];
  const [text, setText] = useState(list.join(', '));
  const joined = list.join('\u0000');
  // Note: only external changes of the list reset the text
  useEffect(() => {
    const parsed = text.split(',').map((s) => s.trim()).filter(Boolean);
    if (parsed.join('\u0000') !== joined) setText(joined ? joined.split('\u0000').join(', ') : '');
  }, [joined]);
  return (
    <input
      aria-label={label}
      data-path={path}
      placeholder={placeholder}
      value={text}
      onChange={(e) => {
        setText(e.target.value);
        onChange(e.target.value.split(',').map((s) => s.trim()).filter(Boolean));
      }}
    />
  );
}

/** A JSON value input: any JSON (10, "text", true, {"a":1}); invalid text is kept but not applied. */
function JsonInput({ value, path, label, onChange }: { value: unknown; path: string; label: string; onChange(v: unknown): void }) {
  const shown = value === undefined ? '' : JSON.stringify(value);
  const [text, setText] = useState(shown);
  const [bad, setBad] = useState(false);
  // Note: only external changes reset the text
  useEffect(() => {
    let same = false;
    try {
      same = text !== '' && JSON.stringify(JSON.parse(text)) === shown;
    } catch {}
    if (!same && !(text === '' && value === undefined)) setText(shown);
  }, [shown]);
  return (
    <span className="json-input">
      <input
        aria-label={label}
        aria-invalid={bad}
        data-path={path}
        value={text}
        onChange={(e) => {
          setText(e.target.value);
          if (e.target.value.trim() === '') {
            setBad(false);
            onChange(undefined);
            return;
          }
          try {
            onChange(JSON.parse(e.target.value));
            setBad(false);
          } catch {
            setBad(true);
          }
        }}
      />
      {bad && <span className="error"> not valid JSON yet</span>}
    </span>
  );
}

export function Fields({ value, specs, path, onChange }: { value: Obj; specs: FieldSpec[]; path: string; onChange(next: Obj): void }) {
  const set = (key: string, v: unknown) => {
    const next = { ...value };
    if (v === undefined) delete next[key];
    else next[key] = v;
    onChange(next);
  };
  return (
    <div className="fields">
      {specs.map((spec) => (
        <Fragment key={spec.key}>
          {field(spec)}
          <FieldIssue path={childPath(path, spec.key)} />
        </Fragment>
      ))}
    </div>
  );

  function field(spec: FieldSpec): ReactNode {
        const p = childPath(path, spec.key);
        const v = value[spec.key];
        switch (spec.kind) {
          case 'text':
            return (
              <label key={spec.key}>
                {spec.label}
                <input aria-label={spec.label} data-path={p} value={typeof v === 'string' ? v : ''} onChange={(e) => set(spec.key, e.target.value)} />
              </label>
            );
          case 'textarea':
            return (
              <label key={spec.key}>
                {spec.label}
                <textarea aria-label={spec.label} data-path={p} rows={4} value={typeof v === 'string' ? v : ''} onChange={(e) => set(spec.key, e.target.value)} />
              </label>
            );
          case 'number':
          case 'optional-number':
          case 'nullable-number':
            return (
              <label key={spec.key}>
                {spec.label}
                <input
                  type="number"
                  step="any"
                  aria-label={spec.label}
                  data-path={p}
                  value={typeof v === 'number' ? v : ''}
                  onChange={(e) => {
                    const raw = e.target.value;
                    if (raw === '') set(spec.key, spec.kind === 'nullable-number' ? null : undefined);
                    else set(spec.key, Number(raw));
                  }}
                />
              </label>
            );
          case 'checkbox':
            return (
              <label key={spec.key} className="inline">
                <input type="checkbox" aria-label={spec.label} data-path={p} checked={v === true} onChange={(e) => set(spec.key, e.target.checked)} />
                {spec.label}
              </label>
            );
          case 'list':
            return (
              <div key={spec.key} className="labelled">
                <span>{spec.label}</span>
                <ListInput value={v} path={p} label={spec.label} onChange={(list) => set(spec.key, list)} />
              </div>
            );
          case 'json':
            return (
              <div key={spec.key} className="labelled">
                <span>{spec.label}</span>
                <JsonInput value={v} path={p} label={spec.label} onChange={(json) => set(spec.key, json)} />
              </div>
            );
          case 'select':
            return (
              <label key={spec.key}>
                {spec.label}
                <select aria-label={spec.label} data-path={p} value={typeof v === 'string' ? v : ''} onChange={(e) => set(spec.key, e.target.value === '' ? undefined : e.target.value)}>
                  {(spec.optional || typeof v !== 'string' || !spec.options.includes(v)) && <option value="">—</option>}
                  {spec.options.map((o) => (
                    <option key={o} value={o}>
                      {o}
                    </option>
                  ))}
                </select>
              </label>
            );
          case 'object': {
            if (spec.nullable && (v === null || v === undefined)) {
              return (
                <div key={spec.key} className="sub" data-path={p}>
                  <strong>{spec.label}</strong>{' '}
                  <button type="button" className="secondary" onClick={() => set(spec.key, spec.create ? spec.create() : {})}>
                    Add {spec.label.toLowerCase()}
                  </button>
                </div>
              );
            }
            const obj = asObj(v);
            return (
              <fieldset key={spec.key} className="sub" data-path={p} aria-label={spec.label}>
                <legend>{spec.label}</legend>
                <Fields value={obj} specs={spec.fields(obj)} path={p} onChange={(next) => set(spec.key, next)} />
                {spec.nullable && (
                  <button type="button" className="link" onClick={() => set(spec.key, null)}>
                    Remove {spec.label.toLowerCase()}
                  </button>
                )}
              </fieldset>
            );
          }
          case 'array':
            return (
              <div key={spec.key} className="sub">
                <ItemList label={spec.label} items={Array.isArray(v) ? v : []} path={p} item={spec.item} create={spec.create} itemLabel={spec.itemLabel} onChange={(items) => set(spec.key, items)} />
              </div>
            );
          default:
            return null;
        }
  }
}

/** A list of objects, each edited by the same specs, with add, remove and reorder. */
export function ItemList({
  label,
  items,
  path,
  item,
  create,
  itemLabel,
  onChange,
  order,
}: {
  label: string;
  items: unknown[];
  path: string;
  item: (value: Obj) => FieldSpec[];
  create: () => Obj;
  itemLabel: (value: Obj, index: number) => string;
  onChange(items: unknown[]): void;
  /** Display order (indices); paths keep the stored index. */
  order?: number[];
}) {
  const [query, setQuery] = useState('');
  const [collapsed, setCollapsed] = useState<ReadonlySet<number>>(new Set());
  const q = query.trim().toLowerCase();
  const indices = (order ?? items.map((_, i) => i)).filter((i) => !q || JSON.stringify(items[i] ?? '').toLowerCase().includes(q));
  const replace = (i: number, next: unknown) => onChange(items.map((x, j) => (j === i ? next : x)));
  const swap = (i: number, k: number) => onChange(items.map((x, j) => (j === i ? items[k] : j === k ? items[i] : x)));
  const toggle = (i: number) => setCollapsed((c) => (c.has(i) ? new Set([...c].filter((x) => x !== i)) : new Set([...c, i])));
  const singular = label.replace(/ies$/, 'y').replace(/s$/, '').toLowerCase();
  return (
    <div className="item-list" data-path={path}>
      <div className="row">
        <strong>{label}</strong>
        <button type="button" className="secondary" onClick={() => onChange([...items, create()])}>
          Add {singular}
        </button>
        {items.length > 1 && (
          <>
            <input type="search" aria-label={`Search ${label.toLowerCase()}`} placeholder={`Search ${label.toLowerCase()}`} value={query} onChange={(e) => setQuery(e.target.value)} />
            <button type="button" className="link" onClick={() => setCollapsed(collapsed.size ? new Set() : new Set(items.map((_, i) => i)))}>
              {collapsed.size ? 'Expand all' : 'Collapse all'}
            </button>
          </>
        )}
      </div>
      {q && indices.length === 0 && <p className="hint">No {label.toLowerCase()} match “{query}”.</p>}
      {indices.map((i) => {
        const obj = asObj(items[i]);
        const name = itemLabel(obj, i);
        const shut = collapsed.has(i);
        return (
          <fieldset key={i} className={`item${shut ? ' collapsed' : ''}`} aria-label={name} data-path={childPath(path, i)}>
            <legend>
              <button type="button" className="link" aria-expanded={!shut} onClick={() => toggle(i)} aria-label={`${shut ? 'Expand' : 'Collapse'} ${name}`}>
                {shut ? '▸' : '▾'}
              </button>{' '}
              {name}
            </legend>
            {!shut && <Fields value={obj} specs={item(obj)} path={childPath(path, i)} onChange={(next) => replace(i, next)} />}
            <div className="row">
              <button type="button" className="link" disabled={i === 0} onClick={() => swap(i, i - 1)} aria-label={`Move ${name} up`}>
                Move up
              </button>
              <button type="button" className="link" disabled={i === items.length - 1} onClick={() => swap(i, i + 1)} aria-label={`Move ${name} down`}>
                Move down
              </button>
              <button
                type="button"
                className="link"
                onClick={() => {
                  if (window.confirm(`Remove ${name}?`)) onChange(items.filter((_, j) => j !== i));
                }}
                aria-label={`Remove ${name}`}
              >
                Remove
              </button>
            </div>
          </fieldset>
        );
      })}
    </div>
  );
}
