/**
 * "Display and voice" (issue 50), a dialog loaded only when opened: the app's theme, the chat's
 * text size, how replies are read aloud (the browser's voice or the connection's, the voice
 * chosen for this character, auto-play, actions between asterisks) and the translation language.
 */
import { useEffect, useRef, useState } from 'react';
import { setTheme, type Theme, THEMES, useTheme } from '../lib/theme.ts';
import { TEXT_SIZES, updateComfort, useComfort } from './comfort.ts';
import { type AuthorVoice, browserVoiceFor, DEFAULT_PROVIDER_VOICE, speechAvailable } from './voice.ts';

const THEME_NAMES: Record<Theme, string> = { system: 'As the system', light: 'Light', dark: 'Dark' };
const SIZE_NAMES: Record<string, string> = { small: 'Small', medium: 'Medium', large: 'Large', 'x-large': 'Extra large' };

function useBrowserVoices(): SpeechSynthesisVoice[] {
  const [voices, setVoices] = useState<SpeechSynthesisVoice[]>(() => (speechAvailable() ? window.speechSynthesis.getVoices() : []));
  useEffect(() => {
    if (!speechAvailable()) return;
    const synth = window.speechSynthesis;
    const update = () => setVoices(synth.getVoices());
    synth.addEventListener?.('voiceschanged', update);
    update();
    return () => synth.removeEventListener?.('voiceschanged', update);
  }, []);
  return voices;
}

export function ComfortPanel(props: { worldId: string; character: string; author: AuthorVoice | undefined; onClose(): void }) {
  const { worldId, character, author, onClose } = props;
  const theme = useTheme();
  const c = useComfort();
  const voices = useBrowserVoices();
  const key = `${worldId}:${character}`;
  const chosen = browserVoiceFor(voices, c.browserVoices[key], author);
  const close = useRef<HTMLButtonElement>(null);
  useEffect(() => close.current?.focus(), []);
  return (
    <div className="confirm-backdrop" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div role="dialog" aria-modal="true" aria-labelledby="comfort-title" className="card sent-prompt comfort-panel">
        <div className="row sent-prompt-head">
          <h3 id="comfort-title">Display and voice</h3>
          <button type="button" className="secondary" ref={close} onClick={onClose}>
            Close
          </button>
        </div>
        <label>
          Theme
          <select value={theme} onChange={(e) => setTheme(e.target.value as Theme)}>
            {THEMES.map((t) => (
              <option key={t} value={t}>
                {THEME_NAMES[t]}
              </option>
            ))}
          </select>
        </label>
        <label>
          Chat text size
          <select value={c.textSize} onChange={(e) => updateComfort({ textSize: e.target.value as typeof c.textSize })}>
            {TEXT_SIZES.map((t) => (
              <option key={t} value={t}>
                {SIZE_NAMES[t]}
              </option>
            ))}
          </select>
        </label>
        <h4>Reading aloud</h4>
        <label>
          Voices from
          <select value={c.voiceEngine} onChange={(e) => updateComfort({ voiceEngine: e.target.value as 'browser' | 'provider' })}>
            <option value="browser">This browser</option>
            <option value="provider">My AI connection (OpenAI-compatible speech)</option>
          </select>
        </label>
        {c.voiceEngine === 'browser' ? (
          <label>
            {character}&apos;s voice
            <select
              value={chosen?.name ?? ''}
              onChange={(e) => updateComfort({ browserVoices: { ...c.browserVoices, [key]: e.target.value } })}
              disabled={voices.length === 0}
            >
              <option value="">{voices.length ? 'The browser’s default' : 'This browser offers no voices'}</option>
              {voices.map((v) => (
                <option key={v.voiceURI || v.name} value={v.name}>
                  {v.name} ({v.lang})
                </option>
              ))}
            </select>
          </label>
        ) : (
          <label>
            {character}&apos;s voice (the provider&apos;s name for it)
            <input
              type="text"
              value={c.providerVoices[key] ?? ''}
              placeholder={author?.providerVoice ?? DEFAULT_PROVIDER_VOICE}
              maxLength={100}
              onChange={(e) => updateComfort({ providerVoices: { ...c.providerVoices, [key]: e.target.value.trim() } })}
            />
          </label>
        )}
        <label className="check">
          <input type="checkbox" checked={c.autoPlay} onChange={(e) => updateComfort({ autoPlay: e.target.checked })} /> Read each new reply aloud
        </label>
        <label>
          Actions between *asterisks*
          <select value={c.actions} onChange={(e) => updateComfort({ actions: e.target.value as 'read' | 'skip' })}>
            <option value="read">Read them</option>
            <option value="skip">Skip them</option>
          </select>
        </label>
        <h4>Translation</h4>
        <label>
          Translate replies into
          <input
            type="text"
            value={c.language}
            placeholder={typeof navigator !== 'undefined' ? navigator.language : 'en'}
            maxLength={40}
            onChange={(e) => updateComfort({ language: e.target.value.trim() })}
          />
        </label>
      </div>
    </div>
  );
}
