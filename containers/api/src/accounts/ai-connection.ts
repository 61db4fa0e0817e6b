import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { requireAuth } from './auth.ts';
import { SecretsKeyMismatchError } from './secret-box.ts';

const httpUrl = z
  .string()
  .trim()
  .max(500)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'https:' || u.protocol === 'http:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL without credentials');

const saveBody = z.strictObject({
  baseUrl: httpUrl,
  defaultModel: z.string().trim().min(1, 'must not be empty').max(200),
  /** Omitted: keep the stored key. */
  apiKey: z.string().trim().min(1).max(500).optional(),
  privateEnabled: z.boolean().default(true),
});

interface ConnectionRow {
  base_url: string;
  default_model: string;
  key_ciphertext: Buffer | null;
  key_iv: Buffer | null;
  key_tag: Buffer | null;
  key_id: string | null;
  key_last4: string | null;
  private_enabled: boolean;
}

export interface PrivateConnection {
  baseUrl: string;
  defaultModel: string;
  apiKey: string | null;
  privateEnabled: boolean;
}

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
  };
}

/** The decrypted connection, for server-side provider calls only. Throws on a changed server key. */
export async function privateConnection(ctx: AppContext, accountId: string): Promise<PrivateConnection | null> {
  const row = await loadRow(ctx, accountId);
  if (!row) return null;
  const apiKey =
    row.key_ciphertext && row.key_iv && row.key_tag && row.key_id
      ? ctx.secrets.open({ ciphertext: row.key_ciphertext, iv: row.key_iv, tag: row.key_tag, keyId: row.key_id })
      : null;
  return { baseUrl: row.base_url, defaultModel: row.default_model, apiKey, privateEnabled: row.private_enabled };
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
    const sealed = body.apiKey ? ctx.secrets.seal(body.apiKey) : undefined;
    const existing = await loadRow(ctx, auth.account.id);
    if (!sealed && !existing?.key_ciphertext && !body.baseUrl.startsWith('http://')) {
      // A hosted provider without a key cannot work; local servers (Ollama) may not need one.
      throw new HttpError(400, 'INVALID_REQUEST', 'Invalid request body: apiKey: an API key is required for this provider');
    }
    await ctx.db.primary.query(
      `insert into ai_connections (account_id, base_url, default_model, key_ciphertext, key_iv, key_tag, key_id, key_last4, private_enabled, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, now())
       on conflict (account_id) do update set base_url = excluded.base_url, default_model = excluded.default_model,
         key_ciphertext = coalesce(excluded.key_ciphertext, ai_connections.key_ciphertext),
         key_iv = coalesce(excluded.key_iv, ai_connections.key_iv),
         key_tag = coalesce(excluded.key_tag, ai_connections.key_tag),
         key_id = coalesce(excluded.key_id, ai_connections.key_id),
         key_last4 = coalesce(excluded.key_last4, ai_connections.key_last4),
         private_enabled = excluded.private_enabled, updated_at = now()`,
      [
        auth.account.id,
        body.baseUrl.replace(/\/+$/, ''),
        body.defaultModel,
        sealed?.ciphertext ?? null,
        sealed?.iv ?? null,
        sealed?.tag ?? null,
        sealed?.keyId ?? null,
        body.apiKey ? body.apiKey.slice(-4) : null,
        body.privateEnabled,
      ],
    );
    return view(ctx, await loadRow(ctx, auth.account.id));
  });

  app.delete('/api/settings/ai', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ctx.db.primary.query('delete from ai_connections where account_id = $1', [auth.account.id]);
    return { configured: false };
  });

  /** Checks the saved connection by listing its models (GET {baseUrl}/models). The key travels only in the Authorization header. */
  app.post('/api/settings/ai/test', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
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
      const res = await fetch(`${connection.baseUrl}/models`, {
        headers: connection.apiKey ? { authorization: `Bearer ${connection.apiKey}` } : {},
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) return { ok: false, status: res.status, message: `The provider answered ${res.status}.` };
      const body = (await res.json().catch(() => null)) as { data?: unknown[] } | null;
      return { ok: true, models: Array.isArray(body?.data) ? body.data.length : 0, latencyMs: Date.now() - started };
    } catch (err) {
      return { ok: false, message: `Could not reach the provider: ${(err as Error).name === 'TimeoutError' ? 'timed out' : (err as Error).message}` };
    }
  });
}
