import { priceOf } from '@yumina/billing';
import { HttpError } from '@yumina/http';
import { sharedTokenCounter } from '@yumina/tokens';
import { assemblePrompt, startSession } from '@yumina/world';
import type { FastifyInstance } from 'fastify';
import { requireAuth } from '../accounts/auth.ts';
import type { AppContext } from '../context.ts';
import { worldForViewer } from './version.ts';

/** How many of the world's latest replies the played average reads. */
export const EXPECTED_COST_TURNS = 50;

/** A typical first turn's player message, for the estimate of a world nobody has played yet. */
const FIRST_MESSAGE = 'Hello. I look around and take in where I am.';

export interface ExpectedCost {
  /** `played`: the average of the world's latest replies (all players, on any connection); `estimate`: the world's prompt as assembled for a first turn. */
  basis: 'played' | 'estimate';
  /** Replies averaged (0 for an estimate). */
  turns: number;
  promptTokens: number;
  /** Of promptTokens: read from the provider's cache (0 for an estimate: a first turn's prompt is not cached yet). */
  cachedTokens: number;
  /** The reply's tokens; for an estimate, the world's reply cap (maxTokens): the most a turn writes. */
  replyTokens: number;
  /** The platform's model and whether its price table names it (false: the default price). */
  model: string | null;
  listedPrice: boolean;
  /** Credits per turn at the platform's price (two decimals), and the same turn with nothing read from the cache. */
  credits: number;
  creditsWithoutCache: number;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/**
 * A world's expected cost per turn for its author (issue 47 point 4): from the last
 * EXPECTED_COST_TURNS replies written in it when it has been played, otherwise from its prompt as the
 * engine assembles it for a first turn; priced at the platform's price of its model (AI_PRICES).
 * Only averages leave the route, never another player's messages.
 */
export async function expectedCostRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get<{ Params: { id: string } }>('/api/worlds/:id/expected-cost', async (request, reply) => {
    const auth = await requireAuth(ctx, request, reply);
    const version = await worldForViewer(ctx.db.primary, request.params.id, { accountId: auth.account.id });
    if (version.ownerId !== auth.account.id) throw new HttpError(403, 'NOT_AUTHOR', 'Only the author of this world sees its expected cost.');
    reply.header('cache-control', 'no-store');
    const { rows } = await ctx.db.primary.query<{ turns: number; prompt: string | null; cached: string | null; out: string | null }>(
      `select count(*)::int as turns, avg(prompt_tokens)::text as prompt, avg(coalesce(cached_tokens, 0))::text as cached, avg(token_count)::text as out
         from (select m.prompt_tokens, m.cached_tokens, m.token_count
                 from chat_sessions s join chat_messages m on m.session_id = s.id
                where s.world_id = $1 and m.role = 'assistant' and m.status = 'complete' and m.prompt_tokens is not null and m.token_count is not null
                order by m.created_at desc limit $2) latest`,
      [request.params.id, EXPECTED_COST_TURNS],
    );
    const played = rows[0]!;
    const model = ctx.config.ai.official?.defaultModel ?? null;
    let figures: Pick<ExpectedCost, 'basis' | 'turns' | 'promptTokens' | 'cachedTokens' | 'replyTokens'>;
    if (played.turns > 0) {
      figures = {
        basis: 'played',
        turns: played.turns,
        promptTokens: Math.round(Number(played.prompt)),
        cachedTokens: Math.round(Number(played.cached)),
        replyTokens: Math.round(Number(played.out)),
      };
    } else {
      const world = version.world;
      const counter = sharedTokenCounter();
      const options = { now: new Date(), seed: 'expected-cost', sessionId: 'expected-cost', model: model ?? undefined };
      const start = startSession(world as never, options);
      const history = [...start.greetings.map((content) => ({ role: 'assistant' as const, content })), { role: 'user' as const, content: FIRST_MESSAGE }];
      const prompt = assemblePrompt(world, start.state, {
        ...options,
        history,
        countTokens: (text) => counter.countText(text, model ?? undefined),
        budgetTokens: Math.max(1, world.settings.maxContext - world.settings.maxTokens),
      });
      figures = { basis: 'estimate', turns: 0, promptTokens: prompt.tokenCount, cachedTokens: 0, replyTokens: world.settings.maxTokens };
    }
    const { price, listed } = priceOf(ctx.config.ai.prices, model ?? '');
    const fresh = Math.max(0, figures.promptTokens - figures.cachedTokens);
    const output = figures.replyTokens * price.output;
    const answer: ExpectedCost = {
      ...figures,
      model,
      listedPrice: listed,
      credits: round2((fresh * price.input + figures.cachedTokens * price.cacheRead + output) / 1_000_000),
      creditsWithoutCache: round2((figures.promptTokens * price.input + output) / 1_000_000),
    };
    return answer;
  });
}
