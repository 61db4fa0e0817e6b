import { type BillingSource, listModels } from '@yumina/ai';
import { HttpError, publicErrorOf } from '@yumina/http';
import type { FastifyInstance } from 'fastify';
import { privateConnection } from '../accounts/ai-connection.ts';
import { requireAuth } from '../accounts/auth.ts';
import { limitAiCheck } from '../accounts/request-limits.ts';
import type { AppContext } from '../context.ts';

interface CatalogueModel {
  id: string;
  name: string;
  provider: BillingSource;
  contextLength: number | null;
}

const OFFICIAL_TTL_S = 300;
const PRIVATE_TTL_S = 60;

async function cached(ctx: AppContext, key: string, ttl: number, load: () => Promise<CatalogueModel[]>): Promise<CatalogueModel[]> {
  const hit = await ctx.store.get(key);
  if (hit) return JSON.parse(hit) as CatalogueModel[];
  const fresh = await load();
  await ctx.store.set(key, JSON.stringify(fresh), ttl);
  return fresh;
}

/** The model catalogue (seed 002 §4 getModels, pinModel, unpinModel). */
export async function modelRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/api/models', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await limitAiCheck(ctx, auth.account.id);
    const errors: string[] = [];
    const official = ctx.config.ai.official;
    const officialModels = official
      ? await cached(ctx, 'models:official', OFFICIAL_TTL_S, async () =>
          (await listModels({ baseUrl: official.baseUrl, apiKey: official.apiKey, privateNetwork: ctx.config.ai.privateNetworkAccess, ...(official.kind !== 'openai' ? { kind: official.kind } : {}) }, { timeoutMs: 10_000 })).map((m) => ({
            id: m.id,
            name: m.name,
            provider: 'official' as const,
            contextLength: m.contextLength,
          })),
        ).catch((err: Error) => {
          request.log.info({ err }, 'model list failed');
          errors.push(`official: ${publicErrorOf(err).message}`);
          return [];
        })
      : [];
    let privateModels: CatalogueModel[] = [];
    const connection = await privateConnection(ctx, auth.account.id).catch(() => null);
    if (connection?.privateEnabled) {
      // Keyed by account and base URL, so a changed connection is listed afresh.
      privateModels = await cached(ctx, `models:private:${auth.account.id}:${connection.kind}:${connection.baseUrl}`, PRIVATE_TTL_S, async () =>
        (await listModels({ baseUrl: connection.baseUrl, apiKey: connection.apiKey, privateNetwork: ctx.config.ai.privateNetworkAccess, ...(connection.kind !== 'openai' ? { kind: connection.kind } : {}) }, { timeoutMs: 10_000 })).map((m) => ({
          id: m.id,
          name: m.name,
          provider: 'private' as const,
          contextLength: m.contextLength,
        })),
      ).catch((err: Error) => {
        request.log.info({ err }, 'model list failed');
        errors.push(`private: ${publicErrorOf(err).message}`);
        return [];
      });
    }
    const [pins, recent] = await Promise.all([
      ctx.db.primary.query<{ model_id: string }>('select model_id from model_pins where account_id = $1 order by pinned_at', [auth.account.id]),
      ctx.db.primary.query<{ model: string }>(
        `select model from usage_ledger where account_id = $1 group by model order by max(created_at) desc limit 10`,
        [auth.account.id],
      ),
    ]);
    reply.header('cache-control', 'no-store');
    return {
      models: [...privateModels, ...officialModels],
      pinned: pins.rows.map((r) => r.model_id),
      recent: recent.rows.map((r) => r.model),
      errors,
    };
  });

  app.put<{ Params: { modelId: string } }>('/api/models/pins/:modelId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const id = request.params.modelId;
    if (!id || id.length > 200 || /[\u0000-\u001f]/.test(id)) throw new HttpError(400, 'INVALID_REQUEST', 'Invalid model id.');
    const count = await ctx.db.primary.query<{ n: number }>('select count(*)::int as n from model_pins where account_id = $1', [auth.account.id]);
    if ((count.rows[0]?.n ?? 0) >= 100) throw new HttpError(409, 'TOO_MANY_PINS', 'At most 100 models can be pinned.');
    await ctx.db.primary.query('insert into model_pins (account_id, model_id) values ($1, $2) on conflict do nothing', [auth.account.id, id]);
    return { ok: true };
  });

  app.delete<{ Params: { modelId: string } }>('/api/models/pins/:modelId', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    await ctx.db.primary.query('delete from model_pins where account_id = $1 and model_id = $2', [auth.account.id, request.params.modelId]);
    return { ok: true };
  });
}
