import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { assetRoutes } from './asset-routes.ts';
import { assistantRoutes } from './assistant-routes.ts';
import { reviewRoutes } from './review-routes.ts';

/** The studio's server side: the review workflow and world assets (issue 13), the assistant (issue 48). */
export async function studioRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await reviewRoutes(app, ctx);
  await assetRoutes(app, ctx);
  await assistantRoutes(app, ctx);
}
