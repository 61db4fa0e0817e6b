/// <reference path="./.sst/platform/config.d.ts" />

/**
 * AWS for the platform: one file per concern under infra/, imported here.
 * Deploy with `npx sst deploy --stage production` (docs/DEPLOY.md).
 */
export default $config({
  app(input) {
    return {
      name: 'yumina',
      removal: input?.stage === 'production' ? 'retain' : 'remove',
      protect: input?.stage === 'production',
      home: 'aws',
    };
  },
  async run() {
    const { vpc } = await import('./infra/network');
    const { database } = await import('./infra/database');
    const { store } = await import('./infra/store');
    const { objects } = await import('./infra/assets');
    const { secrets } = await import('./infra/secrets');
    const { email } = await import('./infra/email');
    const { router } = await import('./infra/router');
    const { api } = await import('./infra/api');
    const { functions } = await import('./infra/functions');
    const { web, partnerRoutes } = await import('./infra/web');
    const { alarmTopic, alarms } = await import('./infra/alarms');
    return {
      vpc: vpc.id,
      database: database.host,
      store: store.host,
      objects: objects.name,
      email: email.sender,
      secrets: Object.keys(secrets).join(','),
      api: api.url,
      functions: Object.keys(functions).join(','),
      web: web.url,
      url: router.url,
      partnerRoutes,
      alarms: alarms.length,
      alarmTopic: alarmTopic.arn,
    };
  },
});
