import { ConfigError, loadConfig } from '@yumina/config';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  // The server's modules load only once the configuration holds: a half-configured container exits at once.
  const [{ startServer }, { ensureWebBuild }] = await Promise.all([import('./server.ts'), import('./web.ts')]);
  if (config.mode === 'local') await ensureWebBuild(config.webDist, { info: (m) => process.stdout.write(`${m}\n`) });
  const server = await startServer(config);
  let signals = 0;
  const shutdown = (signal: string) => {
    signals += 1;
    if (signals > 1) process.exit(1); // a second signal: stop waiting
    server.ctx.log.info({ type: 'shutdown', signal }, 'shutting down: draining in-flight requests');
    const force = setTimeout(() => {
      server.ctx.log.error({ type: 'shutdown' }, `graceful shutdown exceeded ${config.shutdownGraceMs} ms; exiting`);
      process.exit(1);
    }, config.shutdownGraceMs);
    force.unref();
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        server.ctx.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`Failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
