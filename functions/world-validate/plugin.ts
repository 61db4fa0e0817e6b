import { validateWorld } from '@yumina/world';
import type { FastifyPluginAsync } from 'fastify';

export interface WorldValidateOptions {
  [key: string]: unknown;
}

/**
 * POST /api/worlds/validate → 200 {valid: true, world, warnings} | 422 {valid: false, issues: [{path, message}]}.
 * The 422 body is the validation result, not an error; bad JSON (400) and a body over 5 MB (413)
 * use the shared error shape.
 */
const worldValidate: FastifyPluginAsync<WorldValidateOptions> = async (app) => {
  app.post('/api/worlds/validate', { bodyLimit: 5 * 1024 * 1024 }, async (request, reply) => {
    const result = validateWorld(request.body);
    if (result.ok) return { valid: true, world: result.world, warnings: result.warnings };
    return reply.code(422).send({ valid: false, issues: result.issues });
  });
};

export default worldValidate;
