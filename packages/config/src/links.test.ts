import { describe, expect, it } from 'vitest';
import { CONTAINER_REQUIRED, ConfigError, loadConfig, settingsFromLinks } from './index.ts';

const KEY = 'A'.repeat(43);
/** What SST puts in a deployed process's environment for each link (JSON under SST_RESOURCE_<Name>). */
const linked = {
  SST_RESOURCE_App: JSON.stringify({ name: 'yumina', stage: 'production' }),
  SST_RESOURCE_Database: JSON.stringify({ host: 'db.proxy.internal', port: 5432, username: 'postgres', password: 'p@ss/word', database: 'yumina' }),
  SST_RESOURCE_Store: JSON.stringify({ host: 'store.cache.internal', port: 6379, username: 'default', password: 'to&ken' }),
  SST_RESOURCE_Objects: JSON.stringify({ name: 'yumina-production-objects' }),
  SST_RESOURCE_SecretsKey: JSON.stringify({ value: KEY }),
  SST_RESOURCE_IdentitySigningKey: JSON.stringify({ value: 'current-key' }),
  SST_RESOURCE_IdentitySigningKeyNext: JSON.stringify({ value: 'none' }),
  SST_RESOURCE_IdentitySigningKeyPrevious: JSON.stringify({ value: 'previous-key' }),
  SST_RESOURCE_Partners: JSON.stringify({ value: '[]' }),
  SST_RESOURCE_Email: JSON.stringify({ sender: 'yumina.example', configSet: 'yumina-production-emailconfig' }),
};

describe('settings from SST links', () => {
  it('builds DATABASE_URL, a TLS REDIS_URL, GAMES_BUCKET and the keys from the links', () => {
    const config = loadConfig({ ...linked, APP_MODE: 'container', PUBLIC_ORIGIN: 'https://play.example.com' });
    expect(config.database.url).toBe('postgres://postgres:p%40ss%2Fword@db.proxy.internal:5432/yumina');
    expect(new URL(config.database.url!).password).toBe('p%40ss%2Fword');
    expect(config.store.redisUrl).toBe('rediss://default:to%26ken@store.cache.internal:6379');
    expect(config.gamesBucket).toBe('yumina-production-objects');
    expect(config.auth.secretsKey).toBe(KEY);
    // A rotation secret that holds the placeholder is no key.
    expect(config.partners.signingKey).toEqual({ current: 'current-key', next: undefined, previous: 'previous-key' });
    expect(config.partners.json).toBe('[]');
    // The Email component (SES): its domain gives the From address; its configuration set goes with every message.
    expect(config.mail).toMatchObject({ transport: 'ses', from: 'Yumina <no-reply@yumina.example>', sesConfigurationSet: 'yumina-production-emailconfig' });
  });

  it('an explicit environment variable wins over a link', () => {
    const config = loadConfig({ ...linked, APP_MODE: 'container', PUBLIC_ORIGIN: 'https://play.example.com', DATABASE_URL: 'postgres://me@elsewhere:6543/x', REDIS_URL: 'redis://cache:6380' });
    expect(config.database.url).toBe('postgres://me@elsewhere:6543/x');
    expect(config.store.redisUrl).toBe('redis://cache:6380');
    expect(config.gamesBucket).toBe('yumina-production-objects');
  });

  it('a store link that says it has no TLS gets redis://', () => {
    expect(settingsFromLinks({ Store: { host: 'h', port: 6379, tls: false } }).REDIS_URL).toBe('redis://h:6379');
  });

  it('reads this process’s links through SST’s Resource by default', async () => {
    const { spawnSync } = await import('node:child_process');
    const script = `import('./packages/config/src/index.ts').then(({ loadConfig }) => { const c = loadConfig(); process.stdout.write(JSON.stringify([c.database.url, c.store.redisUrl, c.gamesBucket])); })`;
    const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: new URL('../../..', import.meta.url).pathname,
      env: { PATH: process.env.PATH, ...linked },
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    expect(JSON.parse(run.stdout)).toEqual([
      'postgres://postgres:p%40ss%2Fword@db.proxy.internal:5432/yumina',
      'rediss://default:to%26ken@store.cache.internal:6379',
      'yumina-production-objects',
    ]);
  });
});

describe('container mode refuses to start half-configured', () => {
  const complete = {
    APP_MODE: 'container',
    DATABASE_URL: 'postgres://u@db:5432/x',
    REDIS_URL: 'rediss://cache:6379',
    PUBLIC_ORIGIN: 'https://play.example.com',
    SECRETS_KEY: KEY,
    IDENTITY_SIGNING_KEY: 'k',
    SMTP_URL: 'smtp://mail.internal:587',
  };

  it('starts with every setting', () => {
    expect(loadConfig(complete).mode).toBe('container');
  });

  it.each(CONTAINER_REQUIRED)('without %s it throws naming it', (name) => {
    const { [name]: _gone, ...rest } = complete;
    expect(() => loadConfig(rest)).toThrow(ConfigError);
    expect(() => loadConfig(rest)).toThrow(new RegExp(`^Invalid configuration: ${name} is required in container mode`));
  });

  it('refuses an http PUBLIC_ORIGIN except on a loopback host', () => {
    expect(() => loadConfig({ ...complete, PUBLIC_ORIGIN: 'http://play.example.com' })).toThrow(/PUBLIC_ORIGIN must be an https origin/);
    expect(loadConfig({ ...complete, PUBLIC_ORIGIN: 'http://localhost:8080' }).publicOrigin).toBe('http://localhost:8080');
  });

  it('trusts no proxy hop unless told, in both modes; TRUST_PROXY_SECRET comes from its link and needs TRUST_PROXY', () => {
    expect(loadConfig(complete).trustProxy).toBe(0);
    expect(loadConfig({}).trustProxy).toBe(0);
    const secret = 'f'.repeat(64);
    const config = loadConfig({ ...complete, TRUST_PROXY: '2' }, '0', { TrustProxySecret: { value: secret } });
    expect(config.trustProxy).toBe(2);
    expect(config.trustProxySecret).toBe(secret);
    expect(() => loadConfig({ ...complete, TRUST_PROXY_SECRET: secret })).toThrow(/TRUST_PROXY_SECRET proves .* set TRUST_PROXY too/);
    expect(() => loadConfig({ ...complete, TRUST_PROXY: '0', TRUST_PROXY_SECRET: secret })).toThrow(/set TRUST_PROXY too/);
    expect(() => loadConfig({ ...complete, TRUST_PROXY: '2', TRUST_PROXY_SECRET: 'short' })).toThrow(/TRUST_PROXY_SECRET must be 32 to 128/);
    expect(() => loadConfig({ ...complete, TRUST_PROXY: '2', TRUST_PROXY_SECRET: `${'a'.repeat(40)}*` })).toThrow(/TRUST_PROXY_SECRET must be/);
  });

  it('local mode keeps its embedded defaults', () => {
    const config = loadConfig({});
    expect(config.database.url).toBeUndefined();
    expect(config.store.redisUrl).toBeUndefined();
    expect(config.mail).toMatchObject({ transport: 'outbox', from: 'Yumina <no-reply@localhost>', outboxDir: '.data/outbox' });
  });

  it('needs to know where mail goes: SES (the Email link), SMTP_URL, or an outbox folder named on purpose', () => {
    const { SMTP_URL: _smtp, ...noMail } = complete;
    expect(() => loadConfig(noMail)).toThrow(/^Invalid configuration: SMTP_URL or MAIL_SES_SENDER is required in container mode/);
    expect(loadConfig(complete).mail).toMatchObject({ transport: 'smtp', smtpUrl: 'smtp://mail.internal:587', from: 'Yumina <no-reply@play.example.com>' });
    expect(loadConfig({ ...noMail, MAIL_OUTBOX_DIR: '/var/mail/yumina' }).mail).toMatchObject({ transport: 'outbox', outboxDir: '/var/mail/yumina' });
    // SES wins over SMTP; an address as the SES identity is the From address itself.
    expect(loadConfig({ ...complete, MAIL_SES_SENDER: 'hello@yumina.example' }).mail).toMatchObject({ transport: 'ses', from: 'Yumina <hello@yumina.example>' });
    expect(loadConfig({ ...complete, MAIL_FROM: 'Yumina Team <team@yumina.example>' }).mail.from).toBe('Yumina Team <team@yumina.example>');
    expect(() => loadConfig({ ...complete, MAIL_FROM: 'not an address' })).toThrow(/MAIL_FROM must be an address/);
    expect(() => loadConfig({ ...complete, SMTP_URL: 'http://mail.internal' })).toThrow(/SMTP_URL must be a URL \(smtp: or smtps:\)/);
  });
});
