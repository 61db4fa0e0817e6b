import fastifyCompress from '@fastify/compress';
import fastifyCookie from '@fastify/cookie';
import { jwksPlugin } from '@yumina/fn-jwks';
import { partnerConfigPlugin } from '@yumina/fn-partner-config';
import { partnerTokenPlugin } from '@yumina/fn-partner-token';
import worldValidate from '@yumina/fn-world-validate';
import { crossSiteGuard, frameworkErrors, installErrorHandling, installInputGuards, proxyProofCheck, trustProxyOption } from '@yumina/http';
import { randomUUID } from 'node:crypto';
import { createServer, type ServerOptions } from 'node:http';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { aiConnectionRoutes } from './accounts/ai-connection.ts';
import { oauthRoutes } from './accounts/oauth.ts';
import { personaRoutes } from './accounts/personas.ts';
import { accountRoutes } from './accounts/routes.ts';
import { emailRoutes } from './accounts/email-routes.ts';
import { signupRoutes } from './accounts/signup-routes.ts';
import { passwordRoutes } from './accounts/password-routes.ts';
import { exportRoutes } from './accounts/export-routes.ts';
import { loginRoutes } from './accounts/login-routes.ts';
import { profileRoutes } from './accounts/profile-routes.ts';
import { aiCompleteRoutes } from './conversations/ai-complete.ts';
import { previewRoutes } from './conversations/preview.ts';
import { conversationRoutes } from './conversations/routes.ts';
import { sentPromptRoutes } from './conversations/sent-prompt.ts';
import { modelRoutes } from './ai/models.ts';
import { installIdParamCheck } from './id-params.ts';
import { landingRoutes } from './partners/landing.ts';
import { partnerTokenOptions } from './partners/token.ts';
import { billingRoutes } from './billing/routes.ts';
import { companionRoutes } from './companion/routes.ts';
import { gameDeliveryRoutes } from './games/delivery.ts';
import { gameSaveRoutes } from './games/saves.ts';
import { SESSION_COOKIE } from '@yumina/accounts';
import type { AppContext } from './context.ts';
import { admissionOf, bodyDeadline, holdsSlot, keepIfArrived, shedFastPath } from './admission.ts';
import { installStreamDrain } from './event-stream.ts';
import { healthRoutes, livenessFastPath } from './health.ts';
import { outboxPage } from './mail/outbox-page.ts';
import { installFramePolicy, serveWeb, webNotFound } from './web.ts';
import { worldRoutes } from './worlds/routes.ts';
import { expectedCostRoutes } from './worlds/expected-cost.ts';
import { studioRoutes } from './studio/routes.ts';
import { updateRoutes } from './updates/routes.ts';
import { roomRoutes } from './rooms/routes.ts';
import { groupRoutes } from './groups/routes.ts';

/** The smallest API answer worth compressing (bytes): below it the headers cost more than they save. */
export const API_COMPRESS_THRESHOLD = 1024;

export interface BuildOptions {
  /** Serve the built web app (local mode). Off in tests that only need the API. */
  web?: boolean;
}

/**
 * The container's Fastify app. In local mode it also mounts every function's plugin, so one
 * process serves the whole platform; in container mode the functions run as Lambdas and the
 * container answers none of their paths.
 */
export async function buildApp(ctx: AppContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  const web = options.web ?? ctx.config.mode === 'local';
  let closing = false;
  const live = livenessFastPath(ctx, () => closing);
  const checkProxyProof = proxyProofCheck(ctx.config.trustProxySecret);
  const shed = shedFastPath(ctx);
  const admission = admissionOf(ctx);
  const app = Fastify({
    loggerInstance: ctx.log,
    logController: new LogController({ disableRequestLogging: true }),
    // Only the hops the operator trusts (TRUST_PROXY) may name the client address, host and scheme,
    // and with TRUST_PROXY_SECRET only for a request that proves it came through them (@yumina/http proxy-trust.ts).
    trustProxy: trustProxyOption(ctx.config.trustProxy),
    bodyLimit: 1024 * 1024,
    genReqId: () => randomUUID(),
    frameworkErrors,
    return503OnClosing: true,
    // Fastify's own HTTP/1 server, with GET /health/live answered before routing (health.ts), and
    // turns and stream opens refused before routing while the admission queue is full (admission.ts).
    serverFactory: (handler, options) => {
      // What Fastify applies to the server it creates; it passes its options with defaults filled in.
      const o = options as { http?: ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
      // Node's deadlines (issue 43): a request's headers within HTTP_HEADERS_TIMEOUT_MS, the whole
      // request within HTTP_REQUEST_TIMEOUT_MS, else 408 and the connection closed; connections are
      // checked against them every second (Node's default: every 30 s), or twice per headers deadline.
      const { headersTimeoutMs, requestTimeoutMs } = ctx.config.http;
      const deadlines: ServerOptions = {
        headersTimeout: headersTimeoutMs,
        requestTimeout: requestTimeoutMs,
        connectionsCheckingInterval: Math.min(1000, Math.ceil(headersTimeoutMs / 2)),
      };
      const server = createServer({ ...o.http, ...deadlines }, (req, res) => {
        checkProxyProof(req);
        if (live(req, res) || shed(req, res)) return;
        // A turn or stream open let through keeps its place if its body came with its headers (else
        // it gives it back and takes one once its body is read: admission.ts, keepIfArrived), and
        // starts once the requests read with it are answered, and during a burst once its refusals
        // pause: they, and a liveness check caught among them, go out before the admitted work
        // begins (admission.ts, startWhenQuiet).
        if (holdsSlot(req)) admission.startWhenQuiet(() => handler(req, res), () => keepIfArrived(ctx, req));
        else handler(req, res);
      });
      server.keepAliveTimeout = o.keepAliveTimeout;
      server.setTimeout(o.connectionTimeout);
      if (o.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket;
      return server;
    },
  }) as unknown as FastifyInstance;
  // Graceful shutdown: once closing, keep-alive connections are closed as soon as their request in
  // flight has been answered, so the drain does not wait for idle sockets (Fastify keeps them 72 s).
  app.addHook('preClose', (done) => {
    closing = true;
    const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
    app.server.once('close', () => clearInterval(sweep));
    done();
  });
  installStreamDrain(app);
  installErrorHandling(app, {
    notFound: web ? webNotFound(ctx.config.webDist, ctx.config.env) : undefined,
    onServerError: (err, request) => ctx.telemetry.captureError(err, `${request.method} ${request.routeOptions.url ?? 'unmatched'}`),
    // Shedding load (admission.ts, updates/events.ts) is not a failure: no error line per refusal.
    refusals: new Set(['SERVER_BUSY', 'STREAMS_BUSY']),
  });
  installInputGuards(app);
  installIdParamCheck(app);
  installFramePolicy(app);
  app.addHook('onResponse', ctx.telemetry.onResponse);
  // The body deadline of a turn whose body did not come with its headers (admission.ts, keepIfArrived).
  app.addHook('preParsing', bodyDeadline);
  // The health endpoints sit outside the cookie and cross-site machinery: they touch nothing.
  await healthRoutes(app, ctx);
  await app.register(async (app) => {
    // API answers of 1 KB and more go out compressed (brotli or gzip, as the client accepts; `Vary:
    // Accept-Encoding`). Event streams are written to the socket directly (hijacked) and never pass
    // through it; request bodies are not decompressed (a small compressed body could expand past the
    // body limit's meaning).
    await app.register(fastifyCompress, { encodings: ['br', 'gzip'], threshold: API_COMPRESS_THRESHOLD, globalDecompression: false });
    await app.register(fastifyCookie);
    app.addHook('preHandler', crossSiteGuard({ cookieName: SESSION_COOKIE, allowedOrigins: [ctx.config.publicOrigin] }));
    app.get('/api/version', async () => ({ version: ctx.config.version, mode: ctx.config.mode }));
    await accountRoutes(app, ctx);
    await emailRoutes(app, ctx);
    await signupRoutes(app, ctx);
    await passwordRoutes(app, ctx);
    await loginRoutes(app, ctx);
    await profileRoutes(app, ctx);
    await exportRoutes(app, ctx);
    await aiConnectionRoutes(app, ctx);
    await personaRoutes(app, ctx);
    await oauthRoutes(app, ctx);
    await gameSaveRoutes(app, ctx);
    await companionRoutes(app, ctx);
    await worldRoutes(app, ctx);
    await expectedCostRoutes(app, ctx);
    await conversationRoutes(app, ctx);
    await previewRoutes(app, ctx);
    await sentPromptRoutes(app, ctx);
    await aiCompleteRoutes(app, ctx);
    await studioRoutes(app, ctx);
    await updateRoutes(app, ctx);
    await roomRoutes(app, ctx);
    await groupRoutes(app, ctx);
    await billingRoutes(app, ctx);
    await modelRoutes(app, ctx);
    await gameDeliveryRoutes(app, ctx.objects);

    // Every function of functions/ runs as a Lambda in production (infra/routes.ts FUNCTION_ROUTES);
    // in local mode this one process serves them too, with the same plugins.
    if (ctx.config.mode === 'local') {
      await app.register(partnerConfigPlugin, { partners: ctx.partners.registry });
      await app.register(partnerTokenPlugin, partnerTokenOptions(ctx));
      await app.register(worldValidate, {});
      await app.register(jwksPlugin, { keys: ctx.partners.keys });
    }
  });
  // The local outbox's page: only where mail goes to the outbox, never in production mode.
  if (ctx.config.mail.transport === 'outbox' && ctx.config.env !== 'production') await outboxPage(app, ctx);
  if (web) await serveWeb(app, ctx.config.webDist);
  // The partner landing pages are the container's in every mode (the router sends /<partner> here).
  await landingRoutes(app, ctx.partners.registry, ctx.config.webDist);
  return app;
}
