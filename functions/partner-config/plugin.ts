import { type PartnerRegistry, publicPartnerConfig } from '@yumina/identity';
import type { FastifyPluginAsync } from 'fastify';

/** GET /api/partners/:partner/config: the public partner configuration of §2.4. Unknown partner: 404. */

export interface PartnerConfigPluginOptions {
  partners: PartnerRegistry;
}

export const partnerConfigPlugin: FastifyPluginAsync<PartnerConfigPluginOptions> = async (app, options) => {
  app.get<{ Params: { partner: string } }>('/api/partners/:partner/config', async (request, reply) => {
    const partner = options.partners.get(request.params.partner);
    if (!partner) {
      return reply
        .code(404)
        .header('cache-control', 'no-store')
        .send({ error: { code: 'PARTNER_NOT_FOUND', message: 'No such partner.' } });
    }
    // Short public caching: switching a partner on or off shows within a minute.
    return reply.header('cache-control', 'public, max-age=60').send(publicPartnerConfig(partner));
  });
};

export default partnerConfigPlugin;
