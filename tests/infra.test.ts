import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CONTAINER_REQUIRED, loadConfig, loadFunctionConfig, PROXY_SECRET_HEADER, settingsFromLinks } from '@yumina/config';
import { HOST_PAGE_HEADER_POLICY } from '@yumina/sandbox';
import { beforeAll, describe, expect, it } from 'vitest';
import { FRAME_POLICY_INJECTION } from '../infra/frame-policy.ts';
import { FUNCTION_TRUST_PROXY } from '../infra/proxy-proof.ts';
import { BUNDLE_HANDLER, DEEP_LINKS, FUNCTION_ROUTES, functionBundle, hasParameters, matchRoute, partnerSlugs, routeTable } from '../infra/routes.ts';
import { globSync } from 'glob';
import { ASSET_CACHE, REVALIDATE } from '../containers/api/src/web.ts';

/**
 * sst.config.ts and infra/*.ts evaluated with stand-ins for SST's globals that record every
 * component and its arguments (nothing here reaches AWS).
 */

/** A stand-in for a Pulumi output: a label (what it stands for) and a sample value. */
class Out<T = unknown> {
  constructor(
    readonly label: string,
    readonly value: T,
  ) {}
  apply<U>(fn: (v: T) => U): Out<U> {
    return new Out(`${this.label}.apply`, fn(this.value));
  }
}
const resolveValue = (v: unknown): unknown => (v instanceof Out ? resolveValue(v.value) : v);

interface Recorded {
  type: string;
  name: string;
  args: Record<string, unknown>;
  instance: Record<string, unknown>;
}
const recorded: Recorded[] = [];
const routes: [pattern: string, url: unknown, args?: { rewrite?: { regex: string; to: string } }][] = [];
const SAMPLE_PARTNERS = JSON.stringify([
  { slug: 'starfall', clientOrigin: 'https://play.starfall.example', issuer: 'https://platform.example', audience: 'starfall' },
  { slug: 'tidewater', clientOrigin: 'https://client.tidewater.example', issuer: 'https://platform.example', audience: 'tidewater', enabled: false },
]);
const SECRET_SAMPLES: Record<string, string> = { SecretsKey: 'S'.repeat(43), MetricsToken: 'm'.repeat(32), Partners: SAMPLE_PARTNERS, TrustProxySecret: '0123456789abcdef'.repeat(4) };
const LINK_SAMPLES: Record<string, (name: string, self: Record<string, unknown>) => Record<string, unknown>> = {
  Postgres: () => ({ host: 'db.proxy.internal', port: 5432, username: 'postgres', password: 'pw', database: 'yumina' }),
  Redis: () => ({ host: 'store.cache.internal', port: 6379, username: 'default', password: 'token' }),
  Bucket: (name) => ({ name: `yumina-production-${name.toLowerCase()}` }),
  Secret: (_name, self) => ({ value: resolveValue(self.value) }),
  Email: (_name, self) => ({ sender: resolveValue(self.sender), configSet: 'yumina-production-emailconfig' }),
};

function standIn(type: string, extra: (name: string, self: Record<string, unknown>) => Record<string, unknown> = () => ({})) {
  return class {
    constructor(name: string, args?: Record<string, unknown>) {
      const self = this as unknown as Record<string, unknown>;
      Object.assign(self, { name, args });
      Object.assign(self, extra(name, self));
      recorded.push({ type, name, args: args ?? {}, instance: self });
    }
  };
}

const globals = {
  // Pulumi's AWS provider, for the resources SST has no component for (infra/alarms.ts)
  aws: {
    sns: {
      Topic: standIn('sns.Topic', (name) => ({ arn: new Out(`${name}.arn`, `arn:aws:sns:us-east-1:123456789012:${name}`) })),
      TopicSubscription: standIn('sns.TopicSubscription'),
    },
    cloudwatch: { MetricAlarm: standIn('cloudwatch.MetricAlarm') },
  },
  $config: (c: unknown) => c,
  $app: { name: 'yumina', stage: 'production' },
  $interpolate: (strings: TemplateStringsArray, ...values: unknown[]) => new Out('interpolate', strings.reduce((a, s, i) => a + s + String(resolveValue(values[i - 1])), '')),
  $output: (v: unknown) => new Out('output', v),
  sst: {
    // A secret with a placeholder stands for one not set yet; the others for one set.
    Secret: standIn('Secret', (name, self) => ({ value: new Out(`${name}.value`, SECRET_SAMPLES[name] ?? (typeof self.args === 'string' ? self.args : 'x')) })),
    aws: {
      Vpc: standIn('Vpc', (name) => ({ id: new Out(`${name}.id`, 'vpc-1') })),
      Postgres: standIn('Postgres', (name) => ({ host: new Out(`${name}.host`, 'db.proxy.internal') })),
      Redis: standIn('Redis', (name) => ({ host: new Out(`${name}.host`, 'store.cache.internal') })),
      Bucket: standIn('Bucket', (name) => ({ name: new Out(`${name}.name`, name) })),
      Email: standIn('Email', (name, self) => ({ sender: new Out(`${name}.sender`, (self.args as { sender: string }).sender) })),
      Cluster: standIn('Cluster'),
      Service: standIn('Service', (name) => ({ url: new Out(`${name}.url`, 'http://api-lb.example') })),
      Function: standIn('Function', (name) => ({ url: new Out(`${name}.url`, `https://${name.toLowerCase()}.lambda-url.example/`) })),
      Router: standIn('Router', (name) => ({
        url: new Out(`${name}.url`, 'https://d1234.cloudfront.example'),
        route: (pattern: string, url: unknown, args?: { rewrite?: { regex: string; to: string } }) => routes.push([pattern, url, args]),
      })),
      StaticSite: standIn('StaticSite', (name) => ({ url: new Out(`${name}.url`, 'https://d1234.cloudfront.example') })),
    },
  },
};

const one = (type: string, name?: string): Recorded => {
  const found = recorded.filter((r) => r.type === type && (name === undefined || r.name === name));
  expect(found, `${type} ${name ?? ''}`).toHaveLength(1);
  return found[0]!;
};
/** Secret stand-ins record their placeholder as `args`. */
const secretNames = () => recorded.filter((r) => r.type === 'Secret').map((r) => r.name);
const linksOf = (component: Recorded): Record<string, unknown> =>
  Object.fromEntries(
    ((component.args.link as Record<string, unknown>[] | undefined) ?? []).map((linked) => {
      const r = recorded.find((x) => x.instance === linked)!;
      return [r.name, LINK_SAMPLES[r.type]!(r.name, r.instance)];
    }),
  );
const environmentOf = (component: Recorded): Record<string, string> =>
  Object.fromEntries(Object.entries((component.args.environment as Record<string, unknown>) ?? {}).map(([k, v]) => [k, String(resolveValue(v))]));

let outputs: Record<string, unknown>;

interface EdgeRequest {
  uri: string;
  headers: Record<string, { value: string }>;
}
/**
 * The Router's viewer-request function as CloudFront runs it: the injected code inside the
 * function's body, which then returns the request (or an answer the code returned itself).
 */
const viewerRequestOf = (router: Recorded) => {
  const injection = resolveValue((router.args.edge as { viewerRequest: { injection: unknown } }).viewerRequest.injection) as string;
  return new Function('event', `${injection}\nreturn event.request;`) as (event: { request: EdgeRequest }) => EdgeRequest | { statusCode: number };
};

beforeAll(async () => {
  Object.assign(globalThis, globals);
  // The deploy's mail sender (docs/DEPLOY.md): a domain, as production has.
  process.env.MAIL_SENDER = 'yumina.example';
  // where alarms are mailed (infra/alarms.ts)
  process.env.ALARM_EMAIL = 'oncall@yumina.example';
  // Not a literal specifier: the code's type check must not follow it into SST's platform sources
  // (sst.config.ts and infra/ are type-checked on their own, with SST's types: scripts/typecheck.mjs).
  const entry = resolve(import.meta.dirname, '../sst.config.ts');
  const config = ((await import(/* @vite-ignore */ entry)) as { default: unknown }).default as { app(i: { stage: string }): Record<string, unknown>; run(): Promise<Record<string, unknown>> };
  expect(config.app({ stage: 'production' })).toMatchObject({ name: 'yumina', home: 'aws', removal: 'retain', protect: true });
  outputs = await config.run();
});

describe('sst.config.ts and infra/ (recorded with stand-ins for SST)', () => {
  it('gives the service every setting container mode requires, through links the config reads or the environment', () => {
    const api = one('Service', 'Api');
    const env = environmentOf(api);
    const links = linksOf(api);
    const linked = settingsFromLinks(links);
    for (const name of [...CONTAINER_REQUIRED, 'PARTNERS', 'GAMES_BUCKET', 'METRICS_TOKEN', 'TRUST_PROXY']) {
      expect(env[name] ?? linked[name], name).toBeDefined();
    }
    // The config in container mode starts from exactly what the service gets.
    const config = loadConfig(env, '0', links);
    expect(config.mode).toBe('container');
    expect(config.database.url).toBe('postgres://postgres:pw@db.proxy.internal:5432/yumina');
    expect(config.store.redisUrl).toBe('rediss://default:token@store.cache.internal:6379');
    expect(config.publicOrigin).toBe('https://d1234.cloudfront.example');
    expect(config.auth.secretsKey).toBe('S'.repeat(43));
    expect(config.partners.json).toBe(SAMPLE_PARTNERS);
    expect(config.gamesBucket).toBe('yumina-production-objects');
    expect(config.partners.signingKey?.current).toBe('x');
    expect(config.telemetry.metricsToken).toBe('m'.repeat(32));
    expect(config.database.readUrl).toBeUndefined(); // the optional read endpoint, not set
    expect(env.TRUST_PROXY).toBe('2'); // CloudFront, then the load balancer
    expect(env.NODE_ENV).toBe('production');
  });

  it('lets only the Router reach the container: the Router adds the proof, the load balancer forwards only requests with it, the container trusts forwarded addresses only with it', async () => {
    const api = one('Service', 'Api');
    const secret = SECRET_SAMPLES.TrustProxySecret!;
    expect(secretNames()).toContain('TrustProxySecret');
    expect(one('Secret', 'TrustProxySecret').args).toEqual({}); // no placeholder: a deploy stops until it is set
    // The container: two hops (CloudFront, the load balancer), trusted only with the proof.
    const config = loadConfig(environmentOf(api), '0', linksOf(api));
    expect(config.trustProxy).toBe(2);
    expect(config.trustProxySecret).toBe(secret);
    // The Router's viewer-request code, run on a viewer's request that brings its own value.
    const viewerRequest = viewerRequestOf(one('Router', 'Router'));
    const request = { uri: '/api/auth/login', headers: { host: { value: 'play.example' }, [PROXY_SECRET_HEADER]: { value: 'forged' } } as Record<string, { value: string }> };
    expect(viewerRequest({ request })).toBe(request);
    expect(request.headers[PROXY_SECRET_HEADER]).toEqual({ value: secret });
    expect(request.uri).toBe('/api/auth/login'); // a plain path: the Router's prefix matching takes it as it is
    const infraRouter = (await import(/* @vite-ignore */ resolve(import.meta.dirname, '../infra/router.ts'))) as { PROXY_SECRET_HEADER: string };
    expect(infraRouter.PROXY_SECRET_HEADER).toBe(PROXY_SECRET_HEADER);
    // The load balancer: every rule forwards only requests carrying the proof (the listener answers 403 otherwise).
    const rules = (api.args.loadBalancer as { rules: { forward: string; conditions?: { header?: { name: string; values: unknown[] } } }[] }).rules;
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) {
      expect(rule.conditions?.header?.name).toBe(PROXY_SECRET_HEADER);
      expect(rule.conditions!.header!.values.map(resolveValue)).toEqual([secret]);
    }
  });

  it('routes every path the container serves to the service, every function path to its function, the rest to the static site', () => {
    const api = one('Service', 'Api');
    const lambdaOf = (name: string) => one('Function', name[0]!.toUpperCase() + name.slice(1)).name;
    const table = routeTable(partnerSlugs(SAMPLE_PARTNERS));
    // The Router matches prefixes: the plain patterns are its routes; the `:name` ones go through a marker route each.
    const expected = table
      .filter((r) => r.target.kind !== 'static' && !hasParameters(r.pattern))
      .map((r): [string, string] => [r.pattern, r.target.kind === 'function' ? `${lambdaOf(r.target.function)}.url` : 'Api.url']);
    for (const r of table.filter((r) => hasParameters(r.pattern))) {
      const key = r.target.kind === 'function' ? r.target.function : r.target.kind;
      expected.push([`/_route/${key}`, r.target.kind === 'function' ? `${lambdaOf(r.target.function)}.url` : 'Api.url']);
    }
    const actual = routes.map(([pattern, url]): [string, string] => [pattern, (url as Out).label]);
    expect(new Map(actual)).toEqual(new Map(expected));
    expect(actual).toHaveLength(new Map(expected).size);
    expect(actual).toContainEqual(['/starfall', 'Api.url']);
    expect(actual).toContainEqual(['/tidewater', 'Api.url']);
    expect(actual).toContainEqual(['/games', 'Api.url']);
    expect(actual).toContainEqual(['/api/auth/jwks', 'Jwks.url']);
    expect(actual).toContainEqual(['/_route/worldUpdates', 'WorldUpdates.url']);
    expect(outputs.partnerRoutes).toBeInstanceOf(Out);
    expect((outputs.partnerRoutes as Out).value).toEqual(['/tidewater', '/starfall']);
    for (const route of FUNCTION_ROUTES) {
      const fn = one('Function', lambdaOf(route.function));
      expect(fn.args.bundle).toBe(functionBundle(route)); // the compiled bundle, not SST's own build of the source
      expect(fn.args.handler).toBe(BUNDLE_HANDLER);
      expect(fn.args.url).toBe(true);
    }
    expect(api.args.link).toBeDefined();
    const site = one('StaticSite', 'Web');
    expect(site.args.errorPage).toBe('index.html'); // deep links answered by the app
    expect((site.args.router as { instance: unknown }).instance).toBe(one('Router', 'Router').instance);
  });

  it('the static site caches like local mode: hashed assets immutable for a year, index.html and the rest revalidated, no precompressed copies uploaded', () => {
    const site = one('StaticSite', 'Web');
    const fileOptions = (site.args.assets as { fileOptions: { files: string; ignore?: string[]; cacheControl: string }[] }).fileOptions;
    // SST's upload (static-site.ts uploadAssets): options in reverse order, each file takes the first that matches it; files no option matches are not uploaded.
    const dist = resolve(import.meta.dirname, '../web/dist');
    const uploaded = new Map<string, string>();
    for (const option of [...fileOptions].reverse()) {
      for (const file of globSync(option.files, { cwd: dist, nodir: true, dot: true, ignore: ['.sst/**', ...(option.ignore ?? [])] })) {
        if (!uploaded.has(file)) uploaded.set(file, option.cacheControl);
      }
    }
    expect(uploaded.get('index.html')).toBe(REVALIDATE);
    expect(uploaded.get('favicon.svg')).toBe(REVALIDATE);
    const hashed = [...uploaded.keys()].filter((f) => f.startsWith('assets/'));
    expect(hashed.length).toBeGreaterThan(10);
    for (const file of hashed) expect(uploaded.get(file), file).toBe(ASSET_CACHE);
    expect(ASSET_CACHE).toBe('public, max-age=31536000, immutable');
    expect([...uploaded.keys()].filter((f) => /\.(br|gz)$/.test(f))).toEqual([]);
    // The build did write them (local mode serves them), so the ignore above is what keeps them out.
    expect(globSync('assets/*.js.br', { cwd: dist }).length).toBeGreaterThan(0);
  });

  it('the router compresses every answer at the edge (brotli and gzip in the cache key)', () => {
    const router = one('Router', 'Router');
    const transform = router.args.transform as { cachePolicy(a: object): void; cdn(a: object): void };
    const policy = { parametersInCacheKeyAndForwardedToOrigin: { enableAcceptEncodingBrotli: false, enableAcceptEncodingGzip: false, cookiesConfig: { cookieBehavior: 'none' } } };
    transform.cachePolicy(policy);
    expect(policy.parametersInCacheKeyAndForwardedToOrigin).toEqual({ enableAcceptEncodingBrotli: true, enableAcceptEncodingGzip: true, cookiesConfig: { cookieBehavior: 'none' } });
    const cdn = { defaultCacheBehavior: { compress: false, targetOriginId: 'default' } };
    transform.cdn(cdn);
    expect(cdn.defaultCacheBehavior).toEqual({ compress: true, targetOriginId: 'default' });
  });

  it('sends every path where the route table says through the Router as CloudFront runs it (viewer-request code, then prefix matching and rewrite)', () => {
    // The Router's CloudFront function (the proof, then the routing code), then the longest registered prefix at a segment boundary.
    const viewerRequest = viewerRequestOf(one('Router', 'Router'));
    const secret = SECRET_SAMPLES.TrustProxySecret!;
    const cloudFront = (uri: string): string => {
      const request = viewerRequest({ request: { uri, headers: { [PROXY_SECRET_HEADER]: { value: 'forged by the viewer' } } } });
      if ('statusCode' in request) return String(request.statusCode);
      // Whatever backend it goes to, it carries the Router's proof, not the viewer's.
      expect(request.headers[PROXY_SECRET_HEADER], `the proof on ${uri}`).toEqual({ value: secret });
      const path = request.uri;
      let best: (typeof routes)[number] | undefined;
      for (const r of routes) {
        const matches = path.startsWith(r[0]) && (path === r[0] || r[0].endsWith('/') || path[r[0].length] === '/');
        if (matches && (!best || r[0].length > best[0].length)) best = r;
      }
      if (!best) return 'static';
      const rewritten = best[2]?.rewrite ? path.replace(new RegExp(best[2].rewrite.regex), best[2].rewrite.to) : path;
      expect(rewritten, `the backend sees the original path of ${uri}`).toBe(uri);
      return (best[1] as Out).label;
    };
    const table = routeTable(partnerSlugs(SAMPLE_PARTNERS));
    const label = (path: string) => {
      const t = matchRoute(table, path).target;
      if (t.kind === 'static') return 'static';
      return t.kind === 'service' ? 'Api.url' : `${t.function[0]!.toUpperCase()}${t.function.slice(1)}.url`;
    };
    const paths = [
      '/api/partners/starfall/config',
      '/api/partners/starfall/token',
      '/api/partners/unknown/token',
      '/api/partners/starfall',
      '/api/partners/starfall/token/x',
      '/api/auth/jwks',
      '/api/auth/login',
      '/api/worlds/w1/updates',
      '/api/worlds/w1/updates/u2',
      '/api/worlds/w1/updates/events',
      '/api/worlds/w1/updatesx',
      '/api/worlds/w1',
      '/api/worlds/validate',
      '/api/worlds',
      '/api/sessions/s1/messages',
      '/health',
      '/health/live',
      '/games/demo/',
      '/starfall',
      '/',
      '/play/w1',
      '/assets/index-abc.js',
    ];
    for (const path of paths) expect(cloudFront(path), path).toBe(label(path));
    expect(cloudFront('/api/worlds/w1/updates')).toBe('WorldUpdates.url');
    expect(cloudFront('/api/partners/starfall/token')).toBe('PartnerToken.url');
    expect(cloudFront('/api/worlds/w1/updates/events')).toBe('Api.url');
    // Naming a marker route directly reaches nothing.
    expect(cloudFront('/_route/worldUpdates/api/worlds/w1/updates')).toBe('404');
    expect(cloudFront('/_route/service/api/x')).toBe('404');
  });

  it('has a function and a route for every handler of the design card, each linked to exactly what its handler requires', async () => {
    // The design card (docs/DEPLOY.md): partner token and config, the key set, update records, world validation.
    const card = [
      { method: 'GET', path: '/api/partners/starfall/config', function: 'partnerConfig', folder: 'partner-config' },
      { method: 'POST', path: '/api/partners/starfall/token', function: 'partnerToken', folder: 'partner-token' },
      { method: 'GET', path: '/api/auth/jwks', function: 'jwks', folder: 'jwks' },
      { method: 'GET', path: '/api/worlds/w1/updates', function: 'worldUpdates', folder: 'world-updates' },
      { method: 'POST', path: '/api/worlds/w1/updates', function: 'worldUpdates', folder: 'world-updates' },
      { method: 'PATCH', path: '/api/worlds/w1/updates/u1', function: 'worldUpdates', folder: 'world-updates' },
      { method: 'POST', path: '/api/worlds/validate', function: 'worldValidate', folder: 'world-validate' },
    ];
    const table = routeTable();
    for (const handler of card) {
      expect(matchRoute(table, handler.path).target, `${handler.method} ${handler.path}`).toEqual({ kind: 'function', function: handler.function });
    }
    expect(new Set(FUNCTION_ROUTES.map((r) => r.function))).toEqual(new Set(card.map((h) => h.function)));
    for (const route of FUNCTION_ROUTES) {
      const source = resolve(import.meta.dirname, '../functions', route.folder, 'handler.ts');
      expect(existsSync(source), source).toBe(true);
      const module = (await import(/* @vite-ignore */ source)) as { handler?: unknown; SETTINGS?: readonly string[] };
      expect(typeof module.handler, `${route.folder} exports its deployed handler`).toBe('function');
      expect([...(module.SETTINGS ?? [])].sort(), `${route.folder}: the settings its handler requires are the ones infra links`).toEqual([...route.settings].sort());
      // Its links and environment give exactly those settings (through packages/config) and nothing it does not need.
      const fn = one('Function', route.function[0]!.toUpperCase() + route.function.slice(1));
      const env = environmentOf(fn);
      const given = { ...settingsFromLinks(linksOf(fn)), ...env };
      expect(
        Object.keys(given)
          .filter((k) => ['DATABASE_URL', 'REDIS_URL', 'PUBLIC_ORIGIN', 'IDENTITY_SIGNING_KEY', 'PARTNERS', 'SECRETS_KEY', 'METRICS_TOKEN', 'GAMES_BUCKET', 'TRUST_PROXY_SECRET'].includes(k))
          .sort(),
      ).toEqual([...route.settings].sort());
      expect(() => loadFunctionConfig(route.folder, route.settings, env, linksOf(fn))).not.toThrow();
      // Every function answers only the Router (its Function URL is public) and trusts its one hop, CloudFront, to name the client.
      expect(route.settings).toContain('TRUST_PROXY_SECRET');
      const config = loadFunctionConfig(route.folder, route.settings, env, linksOf(fn));
      expect(config.trustProxySecret).toBe(SECRET_SAMPLES.TrustProxySecret);
      expect(config.trustProxy).toBe(Number(FUNCTION_TRUST_PROXY));
      for (const missing of route.settings) {
        const links = Object.fromEntries(Object.entries(linksOf(fn)).filter(([name]) => settingsFromLinks({ [name]: linksOf(fn)[name] })[missing] === undefined));
        const { [missing]: _gone, ...rest } = env;
        expect(() => loadFunctionConfig(route.folder, route.settings, rest, links), `${route.folder} without ${missing}`).toThrow(new RegExp(`^Invalid configuration: ${missing} is required by the ${route.folder} function`));
      }
    }
  });

  it('health as seed 000 §4 defines it: the load balancer and deployments check /health; nothing restarts a task because of /health/live', () => {
    const api = one('Service', 'Api');
    // No container health check: the one ECS would restart a task for.
    expect(api.args.health).toBeUndefined();
    const lb = api.args.loadBalancer as { health: Record<string, { path: string }> };
    expect(Object.values(lb.health).map((h) => h.path)).toEqual(['/health']);
    // A new task gets the grace period before ECS acts on the load balancer's verdict (migrations run at start).
    const service: Record<string, unknown> = {};
    (api.args.transform as { service(a: Record<string, unknown>): void }).service(service);
    expect(service.healthCheckGracePeriodSeconds).toBeGreaterThanOrEqual(30);
    // Nor does the image carry one (ECS ignores an image's HEALTHCHECK, Docker and local runs would not).
    const dockerfile = readFileSync(resolve(import.meta.dirname, '../containers/api/Dockerfile'), 'utf8');
    expect(dockerfile).not.toMatch(/^HEALTHCHECK/m);
    expect(dockerfile).toMatch(/^STOPSIGNAL SIGTERM$/m);
    // docs/OPERATIONS.md says what restarts a replica and what takes it out of rotation, matching the above.
    const operations = readFileSync(resolve(import.meta.dirname, '../docs/OPERATIONS.md'), 'utf8');
    const section = operations.slice(operations.indexOf('### What restarts a replica, what takes it out of rotation'));
    expect(section.length).toBeGreaterThan(0);
    expect(section).toMatch(/process exits/);
    expect(section).toMatch(/`GET \/health` answers 503/);
    expect(section).toMatch(/`\/health\/live` restarts nothing/);
    expect(section).toContain(`${service.healthCheckGracePeriodSeconds} s`);
  });

  it('has the rotation secrets and links them to the service and the key set function', () => {
    expect(secretNames()).toEqual(expect.arrayContaining(['IdentitySigningKey', 'IdentitySigningKeyNext', 'IdentitySigningKeyPrevious', 'Partners', 'SecretsKey']));
    const rotation = ['IdentitySigningKey', 'IdentitySigningKeyNext', 'IdentitySigningKeyPrevious'];
    expect(Object.keys(linksOf(one('Service', 'Api')))).toEqual(expect.arrayContaining(rotation));
    expect(Object.keys(linksOf(one('Function', 'Jwks')))).toEqual([...rotation, 'TrustProxySecret']);
    expect(Object.keys(linksOf(one('Function', 'PartnerToken')))).toEqual(expect.arrayContaining(rotation));
    // Unset rotation secrets hold the placeholder, which config reads as "no key".
    const config = loadConfig(environmentOf(one('Function', 'Jwks')), '0', linksOf(one('Function', 'Jwks')));
    expect(config.partners.signingKey).toEqual({ current: 'x', next: undefined, previous: undefined });
  });

  it('keeps every possible database connection under the database’s limit', () => {
    const api = one('Service', 'Api');
    const env = environmentOf(api);
    // autoscaling (issue 51): from 2 replicas up to API_MAX_REPLICAS (6 by default); the sum below is for the maximum
    const scaling = api.args.scaling as Record<string, unknown>;
    expect(scaling).toMatchObject({ min: 2, max: 6, cpuUtilization: 60, memoryUtilization: 75, requestCount: 3000, scaleOutCooldown: '60 seconds', scaleInCooldown: '300 seconds' });
    const replicas = scaling.max as number;
    const perReplica = Number(env.DATABASE_POOL_MAX) + Number(env.DATABASE_READ_POOL_MAX);
    expect(perReplica).toBe(180);
    // The functions that open the database: those linked to it.
    const db = one('Postgres', 'Database');
    const withDatabase = recorded.filter((r) => r.type === 'Function' && (r.args.link as unknown[]).includes(db.instance));
    expect(withDatabase.map((f) => f.name).sort()).toEqual(['PartnerToken', 'WorldUpdates']);
    const lambdas = withDatabase
      .reduce((sum, f) => sum + (f.args.concurrency as { reserved: number }).reserved * Number(environmentOf(f).DATABASE_POOL_MAX), 0);
    const group: { parameters?: unknown } = { parameters: [{ name: 'rds.force_ssl', value: '0' }] };
    (db.args.transform as { parameterGroup(a: typeof group): void }).parameterGroup(group);
    const parameters = resolveValue(group.parameters) as { name: string; value: string }[];
    const limit = Number(parameters.find((p) => p.name === 'max_connections')?.value);
    expect(limit).toBeGreaterThan(0);
    expect(replicas * perReplica + lambdas).toBeLessThan(limit);
    // docs/OPERATIONS.md shows the same sum.
    const operations = readFileSync(resolve(import.meta.dirname, '../docs/OPERATIONS.md'), 'utf8');
    const lambdaPool = Number(environmentOf(withDatabase[0]!).DATABASE_POOL_MAX);
    expect(operations).toContain(`${replicas} × (${env.DATABASE_POOL_MAX} + ${env.DATABASE_READ_POOL_MAX}) + ${lambdas / lambdaPool} × ${lambdaPool} = ${replicas * perReplica + lambdas} < ${limit}`);
  });

  it('backs the database up with point-in-time recovery for a retention that is a setting; a deletion keeps a final snapshot (issue 51, point 4)', async () => {
    const db = one('Postgres', 'Database');
    const instance: Record<string, unknown> = { backupRetentionPeriod: 7, skipFinalSnapshot: true };
    (db.args.transform as { instance(a: typeof instance): void }).instance(instance);
    // RDS keeps point-in-time recovery for as many days as automated backups are kept (0 would turn both off)
    expect(instance).toMatchObject({ backupRetentionPeriod: 14, backupWindow: '03:00-03:30', deleteAutomatedBackups: false, copyTagsToSnapshot: true, skipFinalSnapshot: false, deletionProtection: true });
    expect(instance.finalSnapshotIdentifier).toBe('yumina-production-database-final');
    const { backupRetentionDays } = (await import(/* @vite-ignore */ resolve(import.meta.dirname, '../infra/database.ts'))) as { backupRetentionDays(v: string | undefined): number };
    expect(backupRetentionDays('35')).toBe(35);
    expect(() => backupRetentionDays('0')).toThrow(/from 1 to 35/);
    expect(() => backupRetentionDays('36')).toThrow(/from 1 to 35/);
    expect(() => backupRetentionDays('a week')).toThrow(/whole number/);
    // the runbook names the setting and the restore
    const operations = readFileSync(resolve(import.meta.dirname, '../docs/OPERATIONS.md'), 'utf8');
    expect(operations).toContain('DATABASE_BACKUP_RETENTION_DAYS');
    expect(operations).toContain('restore-db-instance-to-point-in-time');
  });

  it('scales in gracefully: the load balancer drains a leaving replica, then the server drains within the stop timeout; a maximum the database cannot hold is refused at deploy', async () => {
    const api = one('Service', 'Api');
    const target: { deregistrationDelay?: number } = {};
    (api.args.transform as { target(a: typeof target): void }).target(target);
    const env = environmentOf(api);
    const { STOP_TIMEOUT_SECONDS, maxReplicas } = (await import(/* @vite-ignore */ resolve(import.meta.dirname, '../infra/api.ts'))) as { STOP_TIMEOUT_SECONDS: number; maxReplicas(v: string | undefined): number };
    expect(target.deregistrationDelay).toBeGreaterThan(0);
    // SIGTERM comes after the deregistration delay; the server's own grace is below ECS's stop timeout (then SIGKILL)
    expect(Number(env.SHUTDOWN_GRACE_MS)).toBeLessThan(STOP_TIMEOUT_SECONDS * 1000);
    expect(maxReplicas(undefined)).toBe(6);
    expect(maxReplicas('7')).toBe(7);
    expect(() => maxReplicas('8')).toThrow(/could open 1640 database connections, not below the database's 1600/);
    expect(() => maxReplicas('1')).toThrow(/at least 2/);
    expect(() => maxReplicas('many')).toThrow(/whole number/);
  });

  it("alarms on the operator's metrics the container writes (EMF), sent to the Alarms topic and mailed to ALARM_EMAIL", async () => {
    const { EMF_METRICS, METRICS_NAMESPACE, METRICS_SERVICE } = await import('../containers/api/src/operator-metrics.ts');
    const topic = one('sns.Topic', 'Alarms');
    expect(one('sns.TopicSubscription', 'AlarmEmail').args).toMatchObject({ protocol: 'email', endpoint: 'oncall@yumina.example', topic: topic.instance.arn });
    const alarms = recorded.filter((r) => r.type === 'cloudwatch.MetricAlarm');
    expect(alarms.map((a) => a.args.metricName).sort()).toEqual(['AdmissionRefusals', 'EventLoopStalls', 'ProviderErrors', 'TurnLatency', 'TurnsFailed']);
    for (const alarm of alarms) {
      // each watches a metric the container declares, in its namespace and dimension
      expect(Object.keys(EMF_METRICS), alarm.name).toContain(alarm.args.metricName);
      expect(alarm.args).toMatchObject({ namespace: METRICS_NAMESPACE, dimensions: { Service: METRICS_SERVICE }, treatMissingData: 'notBreaching' });
      expect(alarm.args.alarmActions).toEqual([topic.instance.arn]);
      expect(Number(alarm.args.threshold)).toBeGreaterThan(0);
      expect(Number(alarm.args.datapointsToAlarm)).toBeLessThanOrEqual(Number(alarm.args.evaluationPeriods));
      expect(alarm.args.statistic ?? alarm.args.extendedStatistic, alarm.name).toMatch(/^(Sum|Maximum|p99)$/);
    }
    // the container writes those lines in production: container mode's default interval
    const config = loadConfig(environmentOf(one('Service', 'Api')), '0', linksOf(one('Service', 'Api')));
    expect(config.telemetry.emfIntervalMs).toBe(60_000);
  });

  it('links the mail component (SES) to the container, which sends every mail, and to nothing else', () => {
    const email = one('Email', 'Email');
    expect(email.args.sender).toBe('yumina.example');
    const api = one('Service', 'Api');
    expect((api.args.link as unknown[]).includes(email.instance)).toBe(true);
    for (const fn of recorded.filter((r) => r.type === 'Function')) expect(((fn.args.link as unknown[]) ?? []).includes(email.instance), fn.name).toBe(false);
    // The container reads SES from the link: the sender, the From address and the configuration set.
    const config = loadConfig(environmentOf(api), '0', linksOf(api));
    expect(config.mail).toMatchObject({ transport: 'ses', from: 'Yumina <no-reply@yumina.example>', sesConfigurationSet: 'yumina-production-emailconfig' });
    expect(outputs.email).toBeInstanceOf(Out);
  });

  it('one Redis endpoint without cluster mode (packages/store speaks to one node)', () => {
    expect(one('Redis', 'Store').args.cluster).toBe(false);
  });

  it('the router tells browsers who may frame each HTML page: the static shell gets the host page policy with frame-ancestors', () => {
    const edge = one('Router', 'Router').args.edge as { viewerResponse: { injection: string } };
    expect(edge.viewerResponse.injection).toBe(FRAME_POLICY_INJECTION);
    // The function's code run as CloudFront runs it: `event.response` after the injected code.
    const run = (uri: string, headers: Record<string, { value: string }>) => {
      const event = { request: { uri, method: 'GET', headers: {} }, response: { statusCode: 200, headers } };
      new Function('event', `${edge.viewerResponse.injection}\nreturn event.response;`)(event);
      return Object.fromEntries(Object.entries(event.response.headers).map(([k, v]) => [k, v.value]));
    };
    // The app shell from object storage (any deep link): no header of its own.
    expect(run('/play/wld_x', { 'content-type': { value: 'text/html' } })).toEqual({
      'content-type': 'text/html',
      'content-security-policy': HOST_PAGE_HEADER_POLICY,
      'x-frame-options': 'SAMEORIGIN',
    });
    expect(HOST_PAGE_HEADER_POLICY).toContain("frame-ancestors 'self'");
    expect(HOST_PAGE_HEADER_POLICY).toContain("frame-src 'none'");
    // The partner landing page (container): its own policy, frameable by nobody.
    const landing = "default-src 'self'; frame-src https://play.starfall.example; frame-ancestors 'none'";
    expect(run('/starfall', { 'content-type': { value: 'text/html; charset=utf-8' }, 'content-security-policy': { value: landing } })).toMatchObject({
      'content-security-policy': landing,
      'x-frame-options': 'DENY',
    });
    // An HTML answer with a policy that names no frame-ancestors gets them added; other answers are left alone.
    expect(run('/games/demo/', { 'content-type': { value: 'text/html' }, 'content-security-policy': { value: "default-src 'self'" } })['content-security-policy']).toBe(
      "default-src 'self'; frame-ancestors 'self'",
    );
    expect(run('/api/version', { 'content-type': { value: 'application/json' } })).toEqual({ 'content-type': 'application/json' });
    expect(run('/assets/index.js', { 'content-type': { value: 'text/javascript' } })).toEqual({ 'content-type': 'text/javascript' });
  });
});

describe('the route table', () => {
  const table = routeTable(['starfall']);
  const target = (path: string) => {
    const t = matchRoute(table, path).target;
    return t.kind === 'function' ? t.function : t.kind;
  };

  it('matches like the router: longest pattern at a segment boundary, a `:name` segment matching one segment', () => {
    expect(target('/api/auth/jwks')).toBe('jwks');
    expect(target('/api/worlds/validate')).toBe('worldValidate');
    expect(target('/api/worlds/w1')).toBe('service');
    expect(target('/api/worlds/w1/updates')).toBe('worldUpdates');
    expect(target('/api/worlds/w1/updates/u1')).toBe('worldUpdates');
    expect(target('/api/worlds/w1/updates/events')).toBe('service'); // the live stream: the container holds the connection
    expect(target('/api/worlds/w1/updatesx')).toBe('service');
    expect(target('/api/worlds//updates')).toBe('service'); // an empty segment is no id
    expect(target('/api/partners/starfall/token')).toBe('partnerToken');
    expect(target('/api/partners/starfall/config')).toBe('partnerConfig');
    expect(target('/api/partners/starfall')).toBe('service');
    expect(target('/health')).toBe('service');
    expect(target('/health/live')).toBe('service');
    expect(target('/metrics')).toBe('service');
    expect(target('/games/demo/')).toBe('service');
    expect(target('/starfall')).toBe('service');
    expect(target('/apix')).toBe('static');
    expect(target('/starfallen')).toBe('static');
    expect(target('/')).toBe('static');
    expect(target('/assets/index-abc.js')).toBe('static');
    for (const deep of DEEP_LINKS) expect(target(`${deep}x`)).toBe('static');
  });

  it('refuses a partner slug that would shadow a platform path', () => {
    for (const slug of ['api', 'games', 'play', 'assets', 'health']) expect(() => routeTable([slug])).toThrow(/would shadow/);
  });
});
