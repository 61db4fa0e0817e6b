import { setTheme, type Theme, THEMES, useTheme } from '../lib/theme.ts';
import { AccountSection } from '../account/AccountSection.tsx';
import { DeleteAccountSection } from '../account/DeleteAccountSection.tsx';
import { ExportSection } from '../account/ExportSection.tsx';
import { LoginsSection } from '../account/LoginsSection.tsx';
import { ProfileSection } from '../account/ProfileSection.tsx';
import { BillingSection } from '../billing/BillingSection.tsx';
import { type FormEvent, useEffect, useState } from 'react';
import { api, onFilePicked, uploadFile } from '../lib/api.ts';
import type { CatalogueModel } from '../lib/models.ts';
import { PROVIDER_KINDS, PROVIDER_LABELS, type ProviderKind, providerKindOf } from '@yumina/ai/kinds';
import { navigate } from '../lib/router.tsx';
import { useSession } from '../lib/session.tsx';
import { useTitle } from '../lib/title.ts';

interface AiView {
  configured: boolean;
  baseUrl?: string;
  defaultModel?: string;
  apiKey?: string | null;
  keyStatus?: 'ok' | 'none' | 'undecryptable';
  privateEnabled?: boolean;
  kind?: ProviderKind;
  /** The save moved the connection to another base URL without a key: the old key was removed. */
  keyCleared?: boolean;
}

interface Persona {
  id: string;
  name: string;
  description: string;
  avatar: string | null;
  active: boolean;
}

export function SettingsPage() {
  useTitle(['Settings']);
  const { loading, info } = useSession();
  useEffect(() => {
    if (!loading && !info?.account) navigate(`/login?returnTo=${encodeURIComponent('/app/settings')}`);
  }, [loading, info]);
  useEffect(() => {
    // Deep links such as /app/settings#ai-config scroll to their section once it exists.
    if (!loading && window.location.hash) document.getElementById(window.location.hash.slice(1))?.scrollIntoView();
  }, [loading]);
  if (loading || !info?.account) return <p>Loading…</p>;
  return (
    <div className="settings">
      <h1>Settings</h1>
      <p>
        <strong data-testid="display-name">{info.account.displayName}</strong>
      </p>
      <ProfileSection account={info.account} key={info.account.id} />
      <AppearanceSection />
      <AccountSection />
      <LoginsSection />
      <AiConnection />
      <BillingSection />
      <Personas />
      <LinkedProviders identities={info.identities ?? {}} />
      <ExportSection />
      <DeleteAccountSection />
    </div>
  );
}

/** What the provider answered for the form's current base URL and key (POST /api/settings/ai/probe). */
interface Probe {
  /** The base URL and key it was asked for: an answer for other values is stale. */
  for: string;
  state: 'checking' | 'ok' | 'failed';
  models: CatalogueModel[];
  message: string | null;
}

interface ProbeAnswer {
  ok: boolean;
  models?: Array<{ id: string; name: string; contextLength: number | null }>;
  message?: string;
}

const probeKey = (baseUrl: string, key: string, kind: ProviderKind) => `${kind}\n${baseUrl.trim()}\n${key.trim()}`;

function AiConnection() {
  const [view, setView] = useState<AiView | null>(null);
  const [baseUrl, setBaseUrl] = useState('');
  const [model, setModel] = useState('');
  const [key, setKey] = useState('');
  const [privateEnabled, setPrivateEnabled] = useState(true);
  const [kind, setKind] = useState<ProviderKind>('openai');
  /** The provider kind was chosen by hand (or saved unlike the base URL's host): typing a base URL no longer changes it. */
  const [kindChosen, setKindChosen] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [probe, setProbe] = useState<Probe | null>(null);

  const load = (v: AiView) => {
    setView(v);
    setBaseUrl(v.baseUrl ?? '');
    setModel(v.defaultModel ?? '');
    setPrivateEnabled(v.privateEnabled ?? true);
    setKind(v.kind ?? 'openai');
    setKindChosen(!!v.baseUrl && (v.kind ?? 'openai') !== providerKindOf(v.baseUrl));
    setKey('');
  };
  const changeBaseUrl = (url: string) => {
    setBaseUrl(url);
    // Anthropic's and Gemini's API hosts name their kind until one is chosen by hand
    if (!kindChosen) setKind(providerKindOf(url));
  };
  useEffect(() => {
    api<AiView>('/api/settings/ai').then(load, (e: Error) => setMessage(e.message));
  }, []);

  // The provider can answer once the form holds a base URL and a key for it: one typed, the stored
  // one (which the server uses for the base URL it was saved with only), or none for a local http server.
  const trimmedUrl = baseUrl.trim();
  const probeable =
    view !== null &&
    /^https?:\/\/./i.test(trimmedUrl) &&
    (!!key.trim() || trimmedUrl.startsWith('http://') || (!!view.apiKey && view.baseUrl === trimmedUrl));
  const current = probeKey(baseUrl, key, kind);

  async function runProbe(): Promise<Probe> {
    const asked = probeKey(baseUrl, key, kind);
    setProbe({ for: asked, state: 'checking', models: [], message: null });
    const answer = await api<ProbeAnswer>('/api/settings/ai/probe', {
      method: 'POST',
      json: { baseUrl: trimmedUrl, kind, ...(key.trim() ? { apiKey: key.trim() } : {}) },
    }).catch((e: Error): ProbeAnswer => ({ ok: false, message: e.message }));
    const done: Probe = {
      for: asked,
      state: answer.ok ? 'ok' : 'failed',
      models: (answer.models ?? []).map((m) => ({ ...m, provider: 'private' as const })),
      message: answer.ok ? null : (answer.message ?? 'The connection failed.'),
    };
    setProbe((p) => (p?.for === asked ? done : p));
    return done;
  }

  // Typing settles, then the provider is asked (its models listed, the connection tested): nothing is saved.
  useEffect(() => {
    if (!probeable) return;
    const timer = setTimeout(() => void runProbe(), 600);
    return () => clearTimeout(timer);
    // runProbe reads the values `current` names.
  }, [probeable, current]);

  const shown = probe && probe.for === current && probeable ? probe : null;
  // The list's choice: once the provider lists its models, an empty model takes the first of them.
  useEffect(() => {
    const first = shown?.models[0];
    if (first && !model) setModel(first.id);
  }, [shown, model]);

  async function save(e: FormEvent) {
    e.preventDefault();
    setMessage(null);
    try {
      const saved = await api<AiView>('/api/settings/ai', {
        method: 'PUT',
        json: { baseUrl, kind, privateEnabled, ...(model.trim() ? { defaultModel: model.trim() } : {}), ...(key ? { apiKey: key } : {}) },
      });
      load(saved);
      setMessage(
        saved.keyCleared
          ? 'Saved. The stored API key was removed: a key belongs to the base URL it was saved with and is never sent to another host. Enter the key for this base URL.'
          : model.trim()
            ? 'Saved.'
            : `Saved with the model ${saved.defaultModel ?? ''}, the first your provider lists.`,
      );
    } catch (err) {
      setMessage((err as Error).message);
    }
  }
  async function test() {
    setMessage(null);
    const r = await runProbe();
    const unsaved = !view?.configured || view.baseUrl !== trimmedUrl || view.kind !== kind || !!key.trim();
    setMessage(
      r.state === 'ok'
        ? `Connection works: ${r.models.length} models available.${unsaved ? ' Not saved yet: press Save to keep it.' : ''}`
        : (r.message ?? 'The connection failed.'),
    );
  }
  async function clear() {
    if (!window.confirm('Remove your AI connection and its stored key?')) return;
    load(await api<AiView>('/api/settings/ai', { method: 'DELETE' }));
    setProbe(null);
    setMessage('Cleared.');
  }

  return (
    <section className="card" id="ai-config">
      <h3>AI connection</h3>
      <p className="hint">Your own AI provider: any OpenAI-compatible API (OpenAI, OpenRouter, Ollama…), Anthropic or Google Gemini. The key is encrypted on our servers and never shown again.</p>
      <form onSubmit={save} aria-label="AI connection" aria-busy={view === null}>
        {/* Until the stored connection has loaded the fields stay disabled: typing into them earlier
            would be overwritten by the load. */}
        <fieldset disabled={view === null} className="plain">
        <label>
          Base URL
          <input name="baseUrl" required placeholder="e.g. https://api.openai.com/v1" value={baseUrl} onChange={(e) => changeBaseUrl(e.target.value)} />
        </label>
        <label>
          Provider
          <select
            name="kind"
            value={kind}
            onChange={(e) => {
              setKind(e.target.value as ProviderKind);
              setKindChosen(true);
            }}
          >
            {PROVIDER_KINDS.map((kind) => ({ kind, label: PROVIDER_LABELS[kind] })).map((o) => (
              <option key={o.kind} value={o.kind}>
                {o.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          API key
          <input
            name="apiKey"
            type="password"
            autoComplete="off"
            placeholder={view?.apiKey ? `Saved: ${view.apiKey} (leave empty to keep; a new base URL needs the key again)` : 'Paste your key'}
            value={key}
            onChange={(e) => setKey(e.target.value)}
          />
        </label>
        {view?.apiKey && (
          <p data-testid="masked-key" className="hint">
            Stored key: {view.apiKey}
            {view.keyStatus === 'undecryptable' && ' — can no longer be decrypted; enter it again.'}
          </p>
        )}
        <ModelField probe={shown} probeable={probeable} model={model} setModel={setModel} />
        <label className="inline">
          <input type="checkbox" checked={privateEnabled} onChange={(e) => setPrivateEnabled(e.target.checked)} /> Use for my own play (private use)
        </label>
        <div className="row">
          <button type="submit">Save</button>
          <button type="button" className="secondary" onClick={test} disabled={!probeable || shown?.state === 'checking'}>
            Test connection
          </button>
          <button type="button" className="secondary" onClick={clear} disabled={!view?.configured}>
            Clear
          </button>
        </div>
        </fieldset>
        {message && <p role="status">{message}</p>}
      </form>
    </section>
  );
}

const OTHER_MODEL = '__other_model__';

/**
 * The connection's model: chosen from the list the provider answers for the form's base URL and key
 * (asked before anything is saved), or typed when the list cannot be fetched or the model is not in
 * it. Left empty, Save takes the first model the provider lists.
 */
function ModelField({ probe, probeable, model, setModel }: { probe: Probe | null; probeable: boolean; model: string; setModel(m: string): void }) {
  const [typing, setTyping] = useState(false);
  const models = probe?.models ?? [];
  const choosing = models.length > 0 && !typing;
  const status =
    probe?.state === 'checking'
      ? 'Checking the connection…'
      : probe?.state === 'ok'
        ? `Connection works: ${models.length} models listed.`
        : probe?.state === 'failed'
          ? `The connection failed: ${probe.message ?? 'no answer'}`
          : null;
  if (choosing) {
    const options = model && !models.some((m) => m.id === model) ? [{ id: model, name: model } as CatalogueModel, ...models] : models;
    return (
      <>
      <label>
        Default model
        <select name="defaultModel" value={model} onChange={(e) => (e.target.value === OTHER_MODEL ? setTyping(true) : setModel(e.target.value))}>
          {!model && <option value="">First listed model</option>}
          {options.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name && m.name !== m.id ? `${m.name} (${m.id})` : m.id}
              {m.contextLength ? ` · ${m.contextLength.toLocaleString('en')} tokens` : ''}
            </option>
          ))}
          <option value={OTHER_MODEL}>Another model (type its id)…</option>
        </select>
      </label>
      <p className="hint" data-testid="model-list-note" aria-live="polite">
        {status}
      </p>
      </>
    );
  }
  return (
    <>
    <label>
      Default model
      <input
        name="defaultModel"
        value={model}
        placeholder="Optional: the first listed model"
        onChange={(e) => {
          // Typed by hand: a list that arrives later does not replace what is being typed (it can still be chosen).
          setTyping(true);
          setModel(e.target.value);
        }}
      />
    </label>
    <p className={probe?.state === 'failed' ? 'hint error' : 'hint'} data-testid="model-list-note" aria-live="polite">
        {status ??
          (probeable
            ? 'Checking the connection…'
            : 'Enter the base URL and API key: the provider’s models are listed here and the connection is tested before you save. Left empty, the model is the first one the provider lists.')}
        {typing && models.length > 0 && (
          <button type="button" className="link" onClick={() => setTyping(false)}>
            Choose from the list
          </button>
        )}
    </p>
    </>
  );
}

function Personas() {
  const [personas, setPersonas] = useState<Persona[]>([]);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [error, setError] = useState<string | null>(null);
  const reload = () => api<{ personas: Persona[] }>('/api/personas').then((r) => setPersonas(r.personas), (e: Error) => setError(e.message));
  useEffect(() => {
    void reload();
  }, []);
  const act = (p: Promise<unknown>) => p.then(reload, (e: Error) => setError(e.message));
  return (
    <section className="card" id="personas">
      <h3>Personas</h3>
      <p className="hint">Who you are in a world: the active persona's name fills {'{{user}}'} and its description goes into the prompt.</p>
      <ul className="list personas">
        {personas.map((p) => (
          <li key={p.id} className="persona" data-persona={p.name}>
            <PersonaAvatar persona={p} onChanged={reload} onError={setError} />
            <strong>{p.name}</strong> {p.active && <span className="badge">active</span>} <span className="hint">{p.description}</span>
            {!p.active && (
              <button type="button" className="link" onClick={() => act(api(`/api/personas/${p.id}/activate`, { method: 'POST' }))}>
                Use
              </button>
            )}
            <button type="button" className="link" onClick={() => window.confirm(`Delete the persona ${p.name}?`) && act(api(`/api/personas/${p.id}`, { method: 'DELETE' }))}>
              Delete
            </button>
          </li>
        ))}
      </ul>
      <form
        aria-label="New persona"
        onSubmit={(e) => {
          e.preventDefault();
          setError(null);
          void act(api('/api/personas', { json: { name, description } })).then(() => {
            setName('');
            setDescription('');
          });
        }}
      >
        <input aria-label="Persona name" placeholder="Name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        <input aria-label="Persona description" placeholder="Description" maxLength={5000} value={description} onChange={(e) => setDescription(e.target.value)} />
        <button type="submit">Add persona</button>
      </form>
      {error && <p role="alert">{error}</p>}
    </section>
  );
}

/**
 * A persona's avatar (issue 30 B): shown on the player's bubbles while the persona is active. The
 * upload is resized by the server like a profile picture (a 256 px WebP); a link set elsewhere
 * (https) shows as it is.
 */
function PersonaAvatar({ persona, onChanged, onError }: { persona: Persona; onChanged(): void; onError(message: string | null): void }) {
  const [busy, setBusy] = useState(false);
  const shown = persona.avatar && (persona.avatar.startsWith('https://') || persona.avatar.startsWith('/api/')) ? persona.avatar : null;
  async function upload(file: File) {
    setBusy(true);
    onError(null);
    try {
      await uploadFile(`/api/personas/${encodeURIComponent(persona.id)}/avatar`, file);
      onChanged();
    } catch (err) {
      onError((err as Error).message);
    } finally {
      setBusy(false);
    }
  }
  return (
    <span className="persona-avatar">
      {shown ? (
        <img src={shown} alt={`Avatar of ${persona.name}`} data-testid="persona-avatar" />
      ) : (
        <span className="persona-avatar-empty" aria-hidden="true">
          {(persona.name.trim()[0] ?? '?').toUpperCase()}
        </span>
      )}
      <label className="button secondary file-button">
        {shown ? 'Change avatar' : 'Upload avatar'}
        <span className="visually-hidden"> for {persona.name}</span>
        <input
          type="file"
          accept="image/png,image/jpeg,image/gif,image/webp,image/avif"
          className="visually-hidden"
          disabled={busy}
          onChange={onFilePicked((file) => void upload(file))}
        />
      </label>
      {persona.avatar && (
        <button type="button" className="link" aria-label={`Remove the avatar of ${persona.name}`} onClick={() => api(`/api/personas/${encodeURIComponent(persona.id)}/avatar`, { method: 'DELETE' }).then(onChanged, (e: Error) => onError(e.message))}>
          Remove avatar
        </button>
      )}
    </span>
  );
}

function LinkedProviders({ identities }: { identities: Record<string, string> }) {
  const [providers, setProviders] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const { refresh } = useSession();
  useEffect(() => {
    api<{ providers: string[] }>('/api/auth/providers').then((r) => setProviders(r.providers), () => {});
  }, []);
  const authError = new URLSearchParams(window.location.search).get('auth_error');
  return (
    <section className="card" id="providers">
      <h3>Linked sign-in providers</h3>
      {authError && <p role="alert">Linking failed: {authError.replace(/_/g, ' ')}</p>}
      {providers.length === 0 && Object.keys(identities).length === 0 && <p className="hint">No sign-in providers are configured.</p>}
      <ul className="list">
        {[...new Set([...providers, ...Object.keys(identities)])].map((p) => (
          <li key={p}>
            {p}:{' '}
            {identities[p] ? (
              <>
                linked{' '}
                <button
                  type="button"
                  className="link"
                  onClick={() => window.confirm(`Unlink ${p} from this account?`) && api(`/api/auth/identities/${p}`, { method: 'DELETE' }).then(refresh, (e: Error) => setError(e.message))}
                >
                  Unlink
                </button>
              </>
            ) : (
              <a href={`/api/auth/oauth/${p}/start?link=1&returnTo=${encodeURIComponent('/app/settings#providers')}`}>Link</a>
            )}
          </li>
        ))}
      </ul>
      {error && <p role="alert">{error}</p>}
    </section>
  );
}

const THEME_LABELS: Record<Theme, string> = { system: 'As the system', light: 'Light', dark: 'Dark' };

/** The app's theme (lib/theme.ts), kept in this browser; the player's "Display and voice" sets the same. */
function AppearanceSection() {
  const theme = useTheme();
  return (
    <section className="card" id="appearance">
      <h3>Appearance</h3>
      <label>
        Theme
        <select value={theme} onChange={(e) => setTheme(e.target.value as Theme)}>
          {THEMES.map((t) => (
            <option key={t} value={t}>
              {THEME_LABELS[t]}
            </option>
          ))}
        </select>
      </label>
    </section>
  );
}
