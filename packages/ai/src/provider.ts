import type { ProviderEndpoint } from './chat.ts';
import { AiNoProviderError } from './errors.ts';
import type { ProviderKind } from './kinds.ts';
import type { PrivateNetworkAccess } from './outbound.ts';

/**
 * Key selection: the platform's official key (costs credits) or the account's private connection
 * (costs none), by the account's billing preference. A pure function, so the rule is testable
 * without a database and the caller decides where the inputs come from.
 */

export type BillingSource = 'official' | 'private';
/** `mixed`: the account has both; each call goes where its model lives, private first when either would do. */
export type BillingPreference = 'official' | 'private' | 'mixed';

/** The platform's provider (from configuration). */
export interface OfficialProvider {
  baseUrl: string;
  apiKey: string;
  headers?: Record<string, string>;
  /** The wire protocol (OFFICIAL_AI_KIND); unset: `openai`. */
  kind?: ProviderKind;
}

/** The account's private connection, decrypted (as `privateConnection()` in the container returns it). */
export interface PrivateConnectionSettings {
  baseUrl: string;
  apiKey: string | null;
  defaultModel: string;
  privateEnabled: boolean;
  /** The wire protocol chosen in settings; unset: `openai`. */
  kind?: ProviderKind;
}

export interface ProviderSelectionInput {
  preference: BillingPreference;
  /** Null when the platform has no official key configured. */
  official: OfficialProvider | null;
  privateConnection: PrivateConnectionSettings | null;
  /** Where the chosen model was listed (model catalogue), when known. */
  modelSource?: BillingSource;
  /** AI_PRIVATE_NETWORK_ACCESS, carried on the chosen endpoint (unset: `deny`). */
  privateNetwork?: PrivateNetworkAccess;
}

export interface ProviderSelection {
  source: BillingSource;
  endpoint: ProviderEndpoint;
  /** The private connection's default model (null for the official provider). */
  defaultModel: string | null;
}

/** A private connection can carry calls when it is enabled and has a key, or is a plain-http local server (Ollama). */
export function privateConnectionUsable(connection: PrivateConnectionSettings | null): connection is PrivateConnectionSettings {
  return !!connection && connection.privateEnabled && (connection.apiKey !== null || connection.baseUrl.startsWith('http://'));
}

function officialSelection(official: OfficialProvider, privateNetwork: PrivateNetworkAccess | undefined): ProviderSelection {
  const endpoint: ProviderEndpoint = { baseUrl: official.baseUrl, apiKey: official.apiKey, headers: official.headers };
  if (official.kind && official.kind !== 'openai') endpoint.kind = official.kind;
  if (privateNetwork) endpoint.privateNetwork = privateNetwork;
  return { source: 'official', endpoint, defaultModel: null };
}

function privateSelection(connection: PrivateConnectionSettings, privateNetwork: PrivateNetworkAccess | undefined): ProviderSelection {
  const endpoint: ProviderEndpoint = { baseUrl: connection.baseUrl, apiKey: connection.apiKey };
  if (connection.kind && connection.kind !== 'openai') endpoint.kind = connection.kind;
  if (privateNetwork) endpoint.privateNetwork = privateNetwork;
  return { source: 'private', endpoint, defaultModel: connection.defaultModel };
}

export function selectProvider(input: ProviderSelectionInput): ProviderSelection {
  const { preference, official, privateConnection, modelSource, privateNetwork } = input;
  const privateOk = privateConnectionUsable(privateConnection);
  const wanted: BillingSource | null = preference === 'mixed' ? (modelSource ?? null) : preference;
  if (wanted === 'private') {
    if (!privateOk) throw new AiNoProviderError('Your private AI connection is not set up or is turned off.');
    return privateSelection(privateConnection, privateNetwork);
  }
  if (wanted === 'official') {
    if (!official) throw new AiNoProviderError('The platform AI provider is not available.');
    return officialSelection(official, privateNetwork);
  }
  if (privateOk) return privateSelection(privateConnection, privateNetwork);
  if (official) return officialSelection(official, privateNetwork);
  throw new AiNoProviderError('No AI provider is available: set up a private connection or use platform credits.');
}
