import { randomBytes } from 'node:crypto';
import { CHUNK_COMPANION, CHUNK_ENCOUNTER, CHUNK_INTERACTIONS, decodeCompanionSave } from '@yumina/companion';
import { HttpError, parseWith } from '@yumina/http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { authenticate, requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';

export const GUEST_COOKIE = 'yumina_guest';
export const SAVE_BODY_LIMIT = 1024 * 1024;
const WRITES_PER_MINUTE = 20;

/** A save: a versioned document of named (numbered) chunks; unknown chunks pass through unchanged. */
const saveDocument = z.object({
  format: z.literal('yumina-save'),
  version: z.number().int().min(1).max(1000),
  chunks: z
    .array(z.object({ id: z.number().int().min(0).max(65535), data: z.string().max(SAVE_BODY_LIMIT).regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64') }).loose())
    .max(256)
    .refine((c) => new Set(c.map((x) => x.id)).size === c.length, 'chunk ids must be unique'),
}).loose();

const putBody = z.strictObject({
  /** The revision the game last read (0 when it has none): a mismatch is refused, never overwritten. */
  revision: z.number().int().min(0),
  save: z.unknown(),
  /** A defeated board goes to its own slot and never overwrites the playable save. */
  defeated: z.boolean().default(false),
});

const params = z.object({ game: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/), mode: z.enum(['versus', 'adventure']) });

/** Chunks 21–23 (companion) decoded with the shared codecs; absent chunks read as empty/zero (no migration). */
function companionView(save: { chunks: { id: number; data: string }[] }) {
  const chunks: Partial<Record<number, Uint8Array>> = {};
  for (const c of save.chunks) {
    if (c.id === CHUNK_COMPANION || c.id === CHUNK_INTERACTIONS || c.id === CHUNK_ENCOUNTER) chunks[c.id] = Buffer.from(c.data, 'base64');
  }
  return decodeCompanionSave(chunks);
}

interface SaveRow {
  document: string;
  revision: number;
  updated_at: Date;
}

async function player(ctx: AppContext, request: FastifyRequest, reply: FastifyReply, mode: 'versus' | 'adventure', create: boolean) {
  const auth = await authenticate(ctx, request, reply);
  if (auth) return { player: `acc:${auth.account.id}`, accountId: auth.account.id as string | null };
  if (mode === 'adventure') throw new HttpError(401, 'UNAUTHENTICATED', 'Adventure mode needs a platform account. Sign in to continue.');
  let guest = request.cookies[GUEST_COOKIE];
  if (!guest || !/^[A-Za-z0-9_-]{22}$/.test(guest)) {
    if (!create) return null;
    guest = randomBytes(16).toString('base64url');
    reply.setCookie(GUEST_COOKIE, guest, { path: '/', httpOnly: true, sameSite: 'lax', secure: ctx.config.auth.secureCookies, maxAge: 365 * 86400 });
  }
  return { player: `guest:${guest}`, accountId: null };
}

export async function gameSaveRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const db = ctx.db.primary;

  app.get<{ Params: { game: string; mode: string }; Querystring: { slot?: string; missing?: string } }>('/api/games/:game/saves/:mode', async (request, reply) => {
    const p = parseWith(params, request.params, 'path');
    const who = await player(ctx, request, reply, p.mode, false);
    reply.header('cache-control', 'no-store');
    const slot = request.query.slot === 'defeated' ? 'defeated' : 'main';
    // `?missing=null`: no save yet answers 200 `null` instead of 404 NO_SAVE (a page that reads its
    // save on every open then logs no failed request in the browser's console)
    const none = () => {
      if (request.query.missing === 'null') return reply.type('application/json').send('null');
      throw new HttpError(404, 'NO_SAVE', 'No save yet.');
    };
    if (!who) return none();
    const { rows } = await db.query<SaveRow & Record<string, unknown>>(
      'select document, revision, updated_at from game_saves where player = $1 and game = $2 and mode = $3 and slot = $4',
      [who.player, p.game, p.mode, slot],
    );
    const row = rows[0];
    if (!row) return none();
    // The stored text is sent as is: chunks unknown to this platform come back byte for byte.
    reply.type('application/json');
    const companion = JSON.stringify(companionView(JSON.parse(row.document) as { chunks: { id: number; data: string }[] }));
    return `{"revision":${row.revision},"slot":${JSON.stringify(slot)},"updatedAt":${JSON.stringify(row.updated_at.toISOString())},"companion":${companion},"save":${row.document}}`;
  });

  app.put<{ Params: { game: string; mode: string } }>('/api/games/:game/saves/:mode', { bodyLimit: SAVE_BODY_LIMIT }, async (request, reply) => {
    const p = parseWith(params, request.params, 'path');
    const body = parseWith(putBody, request.body);
    const doc = parseWith(saveDocument, body.save, 'save');
    try {
      companionView(doc);
    } catch (err) {
      throw new HttpError(400, 'INVALID_REQUEST', `Invalid save: ${(err as Error).message}`);
    }
    const who = (await player(ctx, request, reply, p.mode, true))!;
    // Saves happen at checkpoints, never every simulation frame.
    const limit = await ctx.store.rateLimit(`saves:${who.player}:${p.game}`, WRITES_PER_MINUTE, 60);
    if (!limit.allowed) {
      throw new HttpError(429, 'RATE_LIMITED', 'Saving too often; the game saves at checkpoints.', { 'retry-after': String(limit.retryAfter) });
    }
    const slot = body.defeated ? 'defeated' : 'main';
    const document = JSON.stringify(body.save);
    const { rows } = await db.query<{ revision: number }>(
      body.revision === 0
        ? `insert into game_saves (player, account_id, game, mode, slot, document) values ($1, $2, $3, $4, $5, $6)
           on conflict do nothing returning revision`
        : `update game_saves set document = $6, revision = revision + 1, updated_at = now()
            where player = $1 and game = $3 and mode = $4 and slot = $5 and revision = $7 and ($2::text is null or account_id = $2)
           returning revision`,
      body.revision === 0 ? [who.player, who.accountId, p.game, p.mode, slot, document] : [who.player, who.accountId, p.game, p.mode, slot, document, body.revision],
    );
    if (!rows[0]) {
      const current = await db.query<{ revision: number }>('select revision from game_saves where player = $1 and game = $2 and mode = $3 and slot = $4', [
        who.player,
        p.game,
        p.mode,
        slot,
      ]);
      return reply.code(409).send({
        error: { code: 'STALE_REVISION', message: 'This save changed since the game read it; reload it before saving. Nothing was overwritten.' },
        currentRevision: current.rows[0]?.revision ?? 0,
      });
    }
    return { revision: rows[0].revision, slot };
  });

  app.get<{ Params: { game: string } }>('/api/games/:game/profile', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const { rows } = await db.query<{ progress: string; revision: number }>('select progress, revision from game_profiles where account_id = $1 and game = $2', [
      auth.account.id,
      request.params.game,
    ]);
    return { revision: rows[0]?.revision ?? 0, progress: JSON.parse(rows[0]?.progress ?? '{}') as unknown };
  });

  app.put<{ Params: { game: string } }>('/api/games/:game/profile', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const body = parseWith(z.strictObject({ revision: z.number().int().min(0), progress: z.record(z.string(), z.unknown()) }), request.body);
    const text = JSON.stringify(body.progress);
    if (text.length > 64 * 1024) throw new HttpError(413, 'PAYLOAD_TOO_LARGE', 'The progress summary is too large.');
    const { rows } = await db.query<{ revision: number }>(
      body.revision === 0
        ? `insert into game_profiles (account_id, game, progress) values ($1, $2, $3) on conflict do nothing returning revision`
        : `update game_profiles set progress = $3, revision = revision + 1, updated_at = now() where account_id = $1 and game = $2 and revision = $4 returning revision`,
      body.revision === 0 ? [auth.account.id, request.params.game, text] : [auth.account.id, request.params.game, text, body.revision],
    );
    if (!rows[0]) return reply.code(409).send({ error: { code: 'STALE_REVISION', message: 'The profile changed; reload it first.' } });
    return { revision: rows[0].revision };
  });
}
