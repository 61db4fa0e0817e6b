import { AiAuthError, AiUrlRefusedError, keyForAnotherProvider, listModels, normalizeBaseUrl, PROVIDER_KINDS, PROVIDER_LABELS, type ProviderKind, providerKindOf } from '@yumina/ai';
import { HttpError, parseWith, publicErrorOf } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { limitAiCheck } from './request-limits.ts';
import type { AppContext } from '../context.ts';
import { requireAuth } from './auth.ts';
import { SecretsKeyMismatchError } from './secret-box.ts';

/** Shape only; the guard's own rules (normalizeBaseUrl) run in the route, with the configured private-network policy. */
const httpUrl = z.string().trim().min(1, 'must not be empty').max(500);

/** The wire protocol; omitted: detected from the base URL's host (providerKindOf). */
const kindField = z.enum(PROVIDER_KINDS, { message: `must be one of ${PROVIDER_KINDS.join(', ')}` }).optional();

const saveBody = z.strictObject({
  baseUrl: httpUrl,
  /** Omitted or empty: the first model the provider lists (the form states this default). */
  defaultModel: z.string().trim().max(200).optional(),
  /** Omitted: keep the stored key. */
  apiKey: z.string().trim().min(1).max(500).optional(),
  privateEnabled: z.boolean().default(true),
  kind: kindField,
});

/** A connection the form has not saved yet: its models listed, its key used once and never stored or echoed. */
const probeBody = z.strictObject({
  baseUrl: httpUrl,
  /** Omitted: the stored key, when the base URL is the one it was saved with (and only then). */
  apiKey: z.string().trim().min(1).max(500).optional(),
  kind: kindField,
});

export interface ConnectionRow {
  base_url: string;
  default_model: string;
  key_ciphertext: Buffer | null;
  key_iv: Buffer | null;
  key_tag: Buffer | null;
  key_id: string | null;
  key_last4: string | null;
  private_enabled: boolean;
  /** The wire protocol (migration 140). */
  kind: string;
}

export interface PrivateConnection {
  baseUrl: string;
  defaultModel: string;
  apiKey: string | null;
  privateEnabled: boolean;
  kind: ProviderKind;
}

const kindOfRow = (row: ConnectionRow): ProviderKind => ((PROVIDER_KINDS as readonly string[]).includes(row.kind) ? (row.kind as ProviderKind) : 'openai');

async function loadRow(ctx: AppContext, accountId: string): Promise<ConnectionRow | undefined> {
  const { rows } = await ctx.db.primary.query<ConnectionRow & Record<string, unknown>>('select * from ai_connections where account_id = $1', [
    accountId,
  ]);
  return rows[0];
}

/** The public view: the key is only ever shown masked. */
function view(ctx: AppContext, row: ConnectionRow | undefined) {
  if (!row) return { configured: false as const };
  const keyStatus = !row.key_ciphertext ? 'none' : row.key_id === ctx.secrets.keyId ? 'ok' : 'undecryptable';
  return {
    configured: true as const,
    baseUrl: row.base_url,
    defaultModel: row.default_model,
    apiKey: row.key_ciphertext ? `••••${row.key_last4 ?? ''}` : null,
    keyStatus,
    privateEnabled: row.private_enabled,
    kind: kindOfRow(row),
  };
}

/** The decrypted connection, for server-side provider calls only. Throws on a changed server key. */
export async function privateConnection(ctx: AppContext, accountId: string): Promise<PrivateConnection | null> {
  const row = await loadRow(ctx, accountId);
  return row ? openConnection(ctx, row) : null;
}

/** A stored connection row (read here or beside a turn's session) opened: the key decrypted. Throws on a changed server key. */
export function openConnection(ctx: AppContext, row: ConnectionRow): PrivateConnection {
  const apiKey =
    row.key_ciphertext && row.key_iv && row.key_tag && row.key_id
      ? ctx.secrets.open({ ciphertext: row.key_ciphertext, iv: row.key_iv, tag: row.key_tag, keyId: row.key_id })
      : null;
  return { baseUrl: row.base_url, defaultModel: row.default_model, apiKey, privateEnabled: row.private_enabled, kind: kindOfRow(row) };
}

/** The guard's rules on a base URL a user typed (the same at save and at probe): a refusal is a 400 naming the field. */
function guardedBaseUrl(ctx: AppContext, raw: string): string {
  try {
    return normalizeBaseUrl(raw, ctx.config.ai.privateNetworkAccess);
  } catch (err) {
    if (err instanceof AiUrlRefusedError) throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: baseUrl: ${err.message}`);
    throw err;
  }
}

/** The stored key, decrypted, when it belongs to `baseUrl` (a key is only ever sent to the base URL it was saved with). */
function storedKeyFor(ctx: AppContext, row: ConnectionRow | undefined, baseUrl: string): string | null {
  return row && row.base_url === baseUrl ? openConnection(ctx, row).apiKey : null;
}

function listWith(ctx: AppContext, baseUrl: string, apiKey: string | null, kind: ProviderKind) {
  // Through the guarded client, like every provider call.
  return listModels({ baseUrl, apiKey, privateNetwork: ctx.config.ai.privateNetworkAccess, ...(kind !== 'openai' ? { kind } : {}) }, { timeoutMs: 10_000 });
}

/** A typed key plainly meant for another provider (@yumina/ai keyForAnotherProvider): a 400 before it is sent anywhere or stored. */
function refuseKeyOfAnotherProvider(apiKey: string | undefined, kind: ProviderKind, baseUrl: string): void {
  const wrong = apiKey ? keyForAnotherProvider(apiKey, kind, baseUrl) : null;
  if (wrong) throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: apiKey: ${wrong}`);
}

/** What a refused key means: most often a key for another provider. */
const keyRefused = (kind: ProviderKind, status: number) =>
  kind === 'openai'
    ? `the provider refused this key (${status}). Check that it is this provider's API key, not a key for another provider; nothing was saved.`
    : `${PROVIDER_LABELS[kind]} refused this key (${status}). Check that it is a ${PROVIDER_LABELS[kind]} API key, not a key for another provider.`;

/** A probe's or test's failure message: the provider's refusal of a key said plainly on a native kind. */
function failureMessage(err: unknown, kind: ProviderKind): string {
  if (kind !== 'openai' && err instanceof AiAuthError) return keyRefused(kind, err.status);
  return publicErrorOf(err).message;
}

export async function aiConnectionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/api/settings/ai', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    return view(ctx, await loadRow(ctx, auth.account.id));
  });

  app.put('/api/settings/ai', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(saveBody, request.body);
    const baseUrl = guardedBaseUrl(ctx, body.baseUrl);
    const kind = body.kind ?? providerKindOf(baseUrl);
    refuseKeyOfAnotherProvider(body.apiKey, kind, baseUrl);
    const sealed = body.apiKey ? ctx.secrets.seal(body.apiKey) : undefined;
    const existing = await loadRow(ctx, auth.account.id);
    // A stored key belongs to the base URL it was saved with: a new base URL without a new key
    // clears it, so the key is never sent to any other host.
    const moved = !!existing && existing.base_url !== baseUrl;
    const keyKept = !sealed && !moved && !!existing?.key_ciphertext;
    const keyCleared = !sealed && moved && !!existing?.key_ciphertext;
    if (!sealed && !keyKept && !baseUrl.startsWith('http://')) {
      // A hosted provider without a key cannot work; local servers (Ollama) may not need one.
      const why = keyCleared ? 'the saved key belonged to the previous base URL; enter the key for this one' : 'an API key is required for this provider';
      throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: apiKey: ${why}`);
    }
    let defaultModel = body.defaultModel ?? '';
    if (kind !== 'openai') {
      // A native provider's key and model are checked before anything is stored: its model list
      // is authoritative, and its 401 names a key for another provider.
      await limitAiCheck(ctx, auth.account.id);
      let listed: Awaited<ReturnType<typeof listWith>>;
      try {
        listed = await listWith(ctx, baseUrl, body.apiKey ?? (keyKept ? storedKeyFor(ctx, existing, baseUrl) : null), kind);
      } catch (err) {
        if (err instanceof SecretsKeyMismatchError) throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: apiKey: ${err.message}`);
        request.log.info({ err }, 'AI model list at save failed');
        if (err instanceof AiAuthError) throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: apiKey: ${keyRefused(kind, err.status)}`);
        throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: the connection could not be checked with ${PROVIDER_LABELS[kind]} (${publicErrorOf(err).message})`);
      }
      if (!defaultModel) {
        const first = listed[0];
        if (!first) throw new HttpError(400, 'INVALID_REQUEST', 'Invalid request body: defaultModel: the provider listed no models');
        defaultModel = first.id.slice(0, 200);
      } else if (!listed.some((m) => m.id === defaultModel)) {
        throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: defaultModel: ${PROVIDER_LABELS[kind]} does not list the model "${defaultModel}"; choose one from its list`);
      }
    }
    if (!defaultModel) {
      // No model typed or chosen: the stated default, the first model the provider lists.
      await limitAiCheck(ctx, auth.account.id);
      let listed: Awaited<ReturnType<typeof listWith>>;
      try {
        listed = await listWith(ctx, baseUrl, body.apiKey ?? (keyKept ? storedKeyFor(ctx, existing, baseUrl) : null), kind);
      } catch (err) {
        if (err instanceof SecretsKeyMismatchError) throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: apiKey: ${err.message}`);
        request.log.info({ err }, 'AI model list at save failed');
        // the provider refused the key: that, not the model, is what to fix
        if (err instanceof AiAuthError) throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: apiKey: ${keyRefused(kind, err.status)}`);
        throw new HttpError(400, 'INVALID_REQUEST', `Invalid request body: defaultModel: type a model id; the provider's model list could not be fetched (${publicErrorOf(err).message})`);
      }
      const first = listed[0];
      if (!first) throw new HttpError(400, 'INVALID_REQUEST', 'Invalid request body: defaultModel: type a model id; the provider listed no models');
      defaultModel = first.id.slice(0, 200);
    }
    await ctx.db.primary.query(
      `insert into ai_connections (account_id, base_url, default_model, key_ciphertext, key_iv, key_tag, key_id, key_last4, private_enabled, kind, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now())
       on conflict (account_id) do update set base_url = excluded.base_url, default_model = excluded.default_model,
         key_ciphertext = case when excluded.key_ciphertext is not null or ai_connections.base_url <> excluded.base_url then excluded.key_ciphertext else ai_connections.key_ciphertext end,
         key_iv = case when excluded.key_ciphertext is not null or ai_connections.base_url <> excluded.base_url then excluded.key_iv else ai_connections.key_iv end,
         key_tag = case when excluded.key_ciphertext is not null or ai_connections.base_url <> excluded.base_url then excluded.key_tag else ai_connections.key_tag end,
         key_id = case when excluded.key_ciphertext is not null or ai_connections.base_url <> excluded.base_url then excluded.key_id else ai_connections.key_id end,
         key_last4 = case when excluded.key_ciphertext is not null or ai_connections.base_url <> excluded.base_url then excluded.key_last4 else ai_connections.key_last4 end,
         private_enabled = excluded.private_enabled, kind = excluded.kind, updated_at = now()`,
      [
        auth.account.id,
        baseUrl,
        defaultModel,
        sealed?.ciphertext ?? null,
        sealed?.iv ?? null,
        sealed?.tag ?? null,
        sealed?.keyId ?? null,
        body.apiKey ? body.apiKey.slice(-4) : null,
        body.privateEnabled,
        kind,
      ],
    );
    return { ...view(ctx, await loadRow(ctx, auth.account.id)), keyCleared };
  });

  app.delete('/api/settings/ai', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ctx.db.primary.query('delete from ai_connections where account_id = $1', [auth.account.id]);
    return { configured: false };
  });

  /** Checks the saved connection by listing its models (GET {baseUrl}/models). The key travels only in the Authorization header. */
  app.post('/api/settings/ai/test', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await limitAiCheck(ctx, auth.account.id);
    let connection: PrivateConnection | null;
    try {
      connection = await privateConnection(ctx, auth.account.id);
    } catch (err) {
      if (err instanceof SecretsKeyMismatchError) return { ok: false, message: err.message };
      throw err;
    }
    if (!connection) throw new HttpError(404, 'NOT_CONFIGURED', 'No AI connection is saved yet.');
    const started = Date.now();
    try {
      // The key travels only to the base URL it was saved with.
      const models = await listWith(ctx, connection.baseUrl, connection.apiKey, connection.kind);
      return { ok: true, models: models.length, latencyMs: Date.now() - started };
    } catch (err) {
      request.log.info({ err }, 'AI connection test failed');
      const status = (err as { status?: unknown }).status;
      return { ok: false, ...(typeof status === 'number' ? { status } : {}), message: failureMessage(err, connection.kind) };
    }
  });

  /**
   * Tests a connection the form holds but has not saved (issue 44, point 1): lists the models of the
   * typed base URL with the typed key, so the form can offer them and say whether it works before
   * anything is stored. The same guard as a save (normalizeBaseUrl, then the guarded client at call);
   * without a typed key, the stored one is used only for the base URL it was saved with. Nothing is
   * written; the answer never carries the key.
   */
  app.post('/api/settings/ai/probe', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    reply.header('cache-control', 'no-store');
    const body = parseWith(probeBody, request.body);
    const baseUrl = guardedBaseUrl(ctx, body.baseUrl);
    const kind = body.kind ?? providerKindOf(baseUrl);
    refuseKeyOfAnotherProvider(body.apiKey, kind, baseUrl);
    await limitAiCheck(ctx, auth.account.id);
    let apiKey: string | null = body.apiKey ?? null;
    let keySource: 'typed' | 'stored' | 'none' = apiKey ? 'typed' : 'none';
    if (!apiKey) {
      try {
        apiKey = storedKeyFor(ctx, await loadRow(ctx, auth.account.id), baseUrl);
      } catch (err) {
        if (err instanceof SecretsKeyMismatchError) return { ok: false, keySource, message: err.message };
        throw err;
      }
      if (apiKey) keySource = 'stored';
    }
    const started = Date.now();
    try {
      const models = await listWith(ctx, baseUrl, apiKey, kind);
      return {
        ok: true,
        kind,
        keySource,
        latencyMs: Date.now() - started,
        models: models.slice(0, 2000).map((m) => ({ id: m.id, name: m.name, contextLength: m.contextLength })),
      };
    } catch (err) {
      request.log.info({ err }, 'AI connection probe failed');
      const status = (err as { status?: unknown }).status;
      return { ok: false, kind, keySource, ...(typeof status === 'number' ? { status } : {}), message: failureMessage(err, kind) };
    }
  });
}
