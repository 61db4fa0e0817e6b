import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';

/** Seed 002 §2.1 — the stub validates name and version only; the World engine issue widens it. */
const worldHead = z.object({
  name: z.string().min(1, 'name must not be empty').max(200, 'name must be at most 200 characters'),
  version: z.literal('20.0.0', { message: 'version must be "20.0.0"' }),
});

export interface WorldValidateOptions {
  [key: string]: unknown;
}

/** POST /api/worlds/validate → 200 {valid:true, world, warnings} | 422 {valid:false, issues:[{path, message}]}. */
const worldValidate: FastifyPluginAsync<WorldValidateOptions> = async (app) => {
  app.post('/api/worlds/validate', { bodyLimit: 5 * 1024 * 1024 }, async (request, reply) => {
    const result = worldHead.safeParse(request.body);
    if (result.success) return { valid: true, world: request.body, warnings: [] };
    return reply.code(422).send({
      valid: false,
      issues: result.error.issues.map((i) => ({ path: i.path.join('.') || '$', message: i.message })),
    });
  });
};

export default worldValidate;
