/**
 * Replies read aloud (issue 50): the browser's own speech (the Web Speech API's speechSynthesis)
 * with the voice chosen for the character, or the player's connection's OpenAI-compatible speech
 * (POST /api/sessions/:id/messages/:messageId/speech, played as audio). One reading at a time: a
 * new one, Stop, or the player sending ends the one before.
 */
import { apiPath } from '@yumina/sandbox';
import { spokenText } from '@yumina/world/speech';
import type { Comfort } from './comfort.ts';
import { reading } from './reading.ts';

/** The author's voice for the character (the world's `voice`), when set. */
export interface AuthorVoice {
  browserVoice?: string;
  language?: string;
  providerVoice?: string;
  rate?: number;
  pitch?: number;
}

export interface ReadRequest {
  sessionId: string;
  messageId: string;
  text: string;
  /** "<world id>:<character name>": the player's voice choices are kept by it. */
  character: string;
  author: AuthorVoice | undefined;
  comfort: Comfort;
}

/** The provider voice used when neither the player nor the author chose one. */
export const DEFAULT_PROVIDER_VOICE = 'alloy';

export function speechAvailable(): boolean {
  return typeof window !== 'undefined' && 'speechSynthesis' in window && typeof window.SpeechSynthesisUtterance === 'function';
}

/** The browser voice for a character: the player's choice, else the author's (by name, else the first of its language). */
export function browserVoiceFor(voices: readonly SpeechSynthesisVoice[], choice: string | undefined, author: AuthorVoice | undefined): SpeechSynthesisVoice | null {
  const byName = (name: string | undefined) => (name ? voices.find((v) => v.name === name) : undefined);
  return byName(choice) ?? byName(author?.browserVoice) ?? (author?.language ? voices.find((v) => v.lang.toLowerCase().startsWith(author.language!.toLowerCase())) : undefined) ?? null;
}

class Reader {
  private audio: HTMLAudioElement | null = null;
  private url: string | null = null;
  private aborter: AbortController | null = null;

  /** The message being read, or null (kept in ./reading.ts, which the chat watches). */
  get current(): string | null {
    return reading.current;
  }

  private set(id: string | null) {
    reading.set(id);
  }

  async read(r: ReadRequest): Promise<void> {
    this.stop();
    const text = spokenText(r.text, r.comfort.actions);
    if (!text) return;
    this.set(r.messageId);
    if (r.comfort.voiceEngine === 'provider') {
      const aborter = new AbortController();
      this.aborter = aborter;
      const voice = r.comfort.providerVoices[r.character] || r.author?.providerVoice || DEFAULT_PROVIDER_VOICE;
      try {
        const res = await fetch(apiPath('sessions', r.sessionId, 'messages', r.messageId, 'speech'), {
          method: 'POST',
          credentials: 'same-origin',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ voice, actions: r.comfort.actions }),
          signal: aborter.signal,
        });
        if (!res.ok) {
          const err = (await res.json().catch(() => null)) as { error?: { message?: string } } | null;
          throw new Error(err?.error?.message ?? `Reading aloud failed (${res.status})`);
        }
        const blob = await res.blob();
        if (aborter.signal.aborted) return;
        this.url = URL.createObjectURL(blob);
        const audio = new Audio(this.url);
        this.audio = audio;
        audio.onended = () => this.current === r.messageId && this.stop();
        await audio.play().catch(() => this.stop());
      } catch (e) {
        if (!aborter.signal.aborted) {
          this.stop();
          throw e;
        }
      }
      return;
    }
    if (!speechAvailable()) throw new Error('This browser cannot read aloud.');
    const synth = window.speechSynthesis;
    const utterance = new SpeechSynthesisUtterance(text);
    const voice = browserVoiceFor(synth.getVoices(), r.comfort.browserVoices[r.character], r.author);
    if (voice) {
      utterance.voice = voice;
      utterance.lang = voice.lang;
    } else if (r.author?.language) utterance.lang = r.author.language;
    if (r.author?.rate) utterance.rate = r.author.rate;
    if (r.author?.pitch !== undefined) utterance.pitch = r.author.pitch;
    utterance.onend = () => this.current === r.messageId && this.set(null);
    synth.speak(utterance);
  }

  /** Ends any reading (the browser's queue cancelled, the audio paused, a request still on its way aborted). */
  stop(): void {
    this.aborter?.abort();
    this.aborter = null;
    if (this.audio) {
      this.audio.pause();
      this.audio = null;
    }
    if (this.url) {
      URL.revokeObjectURL(this.url);
      this.url = null;
    }
    if (this.current !== null && speechAvailable()) window.speechSynthesis.cancel();
    if (this.current !== null) this.set(null);
  }
}

/** The page's one reader. */
export const reader = new Reader();
