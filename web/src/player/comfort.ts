/**
 * The player's reading comforts (issue 50), kept in this browser: the chat's text size, the voice
 * (engine, the voice chosen per character, auto-play, actions read or skipped) and the language
 * replies are translated into. One store, read by the chat and its settings alike.
 */
import { useSyncExternalStore } from 'react';

export type TextSize = 'small' | 'medium' | 'large' | 'x-large';
export const TEXT_SIZES: readonly TextSize[] = ['small', 'medium', 'large', 'x-large'];

export interface Comfort {
  textSize: TextSize;
  /** Browser speech (speechSynthesis) or the player's connection's /audio/speech. */
  voiceEngine: 'browser' | 'provider';
  /** Each new reply read aloud as it arrives. */
  autoPlay: boolean;
  /** *Actions between asterisks* read as words or skipped. */
  actions: 'read' | 'skip';
  /** The browser voice (its name) chosen per character, by "<world id>:<character name>". */
  browserVoices: Record<string, string>;
  /** The provider voice chosen per character, the same keys. */
  providerVoices: Record<string, string>;
  /** The language replies are translated into: a BCP 47 tag; '' is the browser's. */
  language: string;
}

const KEY = 'yumina:chat-comfort';
const DEFAULTS: Comfort = { textSize: 'medium', voiceEngine: 'browser', autoPlay: false, actions: 'read', browserVoices: {}, providerVoices: {}, language: '' };
const listeners = new Set<() => void>();
let cached: { raw: string | null; value: Comfort } | null = null;

function read(): Comfort {
  let raw: string | null = null;
  try {
    raw = window.localStorage.getItem(KEY);
  } catch {
    // storage refused: the defaults
  }
  if (cached && cached.raw === raw) return cached.value;
  let value = DEFAULTS;
  try {
    const v = JSON.parse(raw ?? 'null') as Partial<Comfort> | null;
    if (v && typeof v === 'object') {
      value = {
        textSize: TEXT_SIZES.includes(v.textSize as TextSize) ? (v.textSize as TextSize) : DEFAULTS.textSize,
        voiceEngine: v.voiceEngine === 'provider' ? 'provider' : 'browser',
        autoPlay: v.autoPlay === true,
        actions: v.actions === 'skip' ? 'skip' : 'read',
        browserVoices: typeof v.browserVoices === 'object' && v.browserVoices ? v.browserVoices : {},
        providerVoices: typeof v.providerVoices === 'object' && v.providerVoices ? v.providerVoices : {},
        language: typeof v.language === 'string' ? v.language : '',
      };
    }
  } catch {
    // a damaged entry: the defaults
  }
  cached = { raw, value };
  return value;
}

export function comfort(): Comfort {
  return read();
}

export function updateComfort(change: Partial<Comfort>): void {
  const next = { ...read(), ...change };
  try {
    window.localStorage.setItem(KEY, JSON.stringify(next));
  } catch {
    cached = { raw: null, value: next };
  }
  for (const l of listeners) l();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useComfort(): Comfort {
  return useSyncExternalStore(subscribe, read);
}

/** The language replies are translated into: the player's choice, else the browser's. */
export function translationLanguage(c: Comfort): string {
  return c.language || (typeof navigator !== 'undefined' ? navigator.language : 'en') || 'en';
}
