import { describe, expect, it } from 'vitest';
import { AiNoProviderError } from './errors.ts';
import { type PrivateConnectionSettings, selectProvider } from './provider.ts';

const official = { baseUrl: 'https://openrouter.ai/api/v1', apiKey: 'sk-platform' };
const privateConn: PrivateConnectionSettings = { baseUrl: 'https://api.openai.com/v1', apiKey: 'sk-mine', defaultModel: 'gpt-4o', privateEnabled: true };

describe('selectProvider', () => {
  it('uses the official key for the official preference', () => {
    expect(selectProvider({ preference: 'official', official, privateConnection: privateConn })).toEqual({
      source: 'official',
      endpoint: { baseUrl: official.baseUrl, apiKey: 'sk-platform', headers: undefined },
      defaultModel: null,
    });
  });

  it('uses the private connection for the private preference and never falls back to credits', () => {
    expect(selectProvider({ preference: 'private', official, privateConnection: privateConn })).toEqual({
      source: 'private',
      endpoint: { baseUrl: privateConn.baseUrl, apiKey: 'sk-mine' },
      defaultModel: 'gpt-4o',
    });
    expect(() => selectProvider({ preference: 'private', official, privateConnection: { ...privateConn, privateEnabled: false } })).toThrow(AiNoProviderError);
    expect(() => selectProvider({ preference: 'private', official, privateConnection: null })).toThrow(AiNoProviderError);
    expect(() => selectProvider({ preference: 'private', official, privateConnection: { ...privateConn, apiKey: null } })).toThrow(AiNoProviderError);
  });

  it('accepts a keyless local server (Ollama) as a private connection', () => {
    const ollama = { baseUrl: 'http://localhost:11434/v1', apiKey: null, defaultModel: 'llama3', privateEnabled: true };
    expect(selectProvider({ preference: 'private', official: null, privateConnection: ollama }).endpoint).toEqual({ baseUrl: ollama.baseUrl, apiKey: null });
  });

  it('refuses the official preference without a platform key', () => {
    expect(() => selectProvider({ preference: 'official', official: null, privateConnection: privateConn })).toThrow(AiNoProviderError);
  });

  it('in a mix, follows where the model is listed, else prefers the private connection', () => {
    expect(selectProvider({ preference: 'mixed', official, privateConnection: privateConn, modelSource: 'official' }).source).toBe('official');
    expect(selectProvider({ preference: 'mixed', official, privateConnection: privateConn, modelSource: 'private' }).source).toBe('private');
    expect(selectProvider({ preference: 'mixed', official, privateConnection: privateConn }).source).toBe('private');
    expect(selectProvider({ preference: 'mixed', official, privateConnection: { ...privateConn, privateEnabled: false } }).source).toBe('official');
    expect(() => selectProvider({ preference: 'mixed', official: null, privateConnection: null })).toThrow(AiNoProviderError);
  });
});
