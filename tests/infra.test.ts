import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CONTAINER_REQUIRED, loadConfig, settingsFromLinks } from '@yumina/config';
import { beforeAll, describe, expect, it } from 'vitest';
import { globSync } from 'glob';
import { ASSET_CACHE, REVALIDATE } from '../containers/api/src/web.ts';
import { DEEP_LINKS, FUNCTION_ROUTES, matchRoute, partnerSlugs, routeTable } from '../infra/routes.ts';

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
const routes: [pattern: string, url: unknown][] = [];
const SAMPLE_PARTNERS = JSON.stringify([
  { slug: 'starfall', clientOrigin: 'https://play.starfall.example', issuer: 'https://platform.example', audience: 'starfall' },
  { slug: 'tidewater', clientOrigin: 'https://client.tidewater.example', issuer: 'https://platform.example', audience: 'tidewater', enabled: false },
]);
const SECRET_SAMPLES: Record<string, string> = { SecretsKey: 'S'.repeat(43), MetricsToken: 'm'.repeat(32), Partners: SAMPLE_PARTNERS };
const LINK_SAMPLES: Record<string, (name: string, self: Record<string, unknown>) => Record<string, unknown>> = {
  Postgres: () => ({ host: 'db.proxy.internal', port: 5432, username: 'postgres', password: 'pw', database: 'yumina' }),
  Redis: () => ({ host: 'store.cache.internal', port: 6379, username: 'default', password: 'token' }),
  Bucket: (name) => ({ name: `yumina-production-${name.toLowerCase()}` }),
  Secret: (_name, self) => ({ value: resolveValue(self.value) }),
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
      Cluster: standIn('Cluster'),
      Service: standIn('Service', (name) => ({ url: new Out(`${name}.url`, 'http://api-lb.example') })),
      Function: standIn('Function', (name) => ({ url: new Out(`${name}.url`, `https://${name.toLowerCase()}.lambda-url.example/`) })),
      Router: standIn('Router', (name) => ({
        url: new Out(`${name}.url`, 'https://d1234.cloudfront.example'),
        route: (pattern: string, url: unknown) => routes.push([pattern, url]),
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

beforeAll(async () => {
  Object.assign(globalThis, globals);
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

  it('routes every path the container serves to the service, every function path to its function, the rest to the static site', () => {
    const api = one('Service', 'Api');
    const table = routeTable(partnerSlugs(SAMPLE_PARTNERS));
    const expected = table
      .filter((r) => r.target.kind !== 'static')
      .map((r): [string, string] => [r.pattern, r.target.kind === 'service' ? 'Api.url' : `${one('Function', r.target.kind === 'function' ? r.target.function[0]!.toUpperCase() + r.target.function.slice(1) : '').name}.url`]);
    const actual = routes.map(([pattern, url]): [string, string] => [pattern, (url as Out).label]);
    expect(new Map(actual)).toEqual(new Map(expected));
    expect(actual).toHaveLength(expected.length);
    expect(actual).toContainEqual(['/starfall', 'Api.url']);
    expect(actual).toContainEqual(['/tidewater', 'Api.url']);
    expect(actual).toContainEqual(['/games', 'Api.url']);
    expect(actual).toContainEqual(['/api/auth/jwks', 'Jwks.url']);
    expect(outputs.partnerRoutes).toBeInstanceOf(Out);
    expect((outputs.partnerRoutes as Out).value).toEqual(['/tidewater', '/starfall']);
    for (const route of FUNCTION_ROUTES) {
      const fn = recorded.find((r) => r.type === 'Function' && r.args.handler === route.handler);
      expect(fn, route.handler).toBeDefined();
      expect(fn!.args.url).toBe(true);
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

  it('checks the container with node on /health/live and the load balancer on /health', () => {
    const api = one('Service', 'Api');
    const health = api.args.health as { command: string[] };
    expect(health.command[0]).toBe('CMD');
    expect(health.command[1]).toBe('node');
    const script = readFileSync(resolve(import.meta.dirname, '..', health.command[2]!), 'utf8');
    expect(script).toMatch(/\/health\/live/);
    expect(script).not.toMatch(/\/health['"`]/);
    expect(health.command.join(' ')).not.toMatch(/wget|curl/);
    const lb = api.args.loadBalancer as { health: Record<string, { path: string }> };
    expect(Object.values(lb.health).map((h) => h.path)).toEqual(['/health']);
    // The image's own HEALTHCHECK is the same command.
    const dockerfile = readFileSync(resolve(import.meta.dirname, '../containers/api/Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^HEALTHCHECK .* CMD \["node", "containers\/api\/liveness-check\.mjs"\]$/m);
    expect(dockerfile).not.toMatch(/wget|curl/);
  });

  it('has the rotation secrets and links them to the service and the key set function', () => {
    expect(secretNames()).toEqual(expect.arrayContaining(['IdentitySigningKey', 'IdentitySigningKeyNext', 'IdentitySigningKeyPrevious', 'Partners', 'SecretsKey']));
    const rotation = ['IdentitySigningKey', 'IdentitySigningKeyNext', 'IdentitySigningKeyPrevious'];
    expect(Object.keys(linksOf(one('Service', 'Api')))).toEqual(expect.arrayContaining(rotation));
    expect(Object.keys(linksOf(one('Function', 'Jwks')))).toEqual(rotation);
    // Unset rotation secrets hold the placeholder, which config reads as "no key".
    const config = loadConfig({}, '0', linksOf(one('Function', 'Jwks')));
    expect(config.partners.signingKey).toEqual({ current: 'x', next: undefined, previous: undefined });
  });

  it('keeps every possible database connection under the database’s limit', () => {
    const api = one('Service', 'Api');
    const env = environmentOf(api);
    const replicas = (api.args.scaling as { max: number }).max;
    expect(replicas).toBe(2);
    const perReplica = Number(env.DATABASE_POOL_MAX) + Number(env.DATABASE_READ_POOL_MAX);
    expect(perReplica).toBe(180);
    const lambdas = recorded
      .filter((r) => r.type === 'Function')
      .reduce((sum, f) => sum + (f.args.concurrency as { reserved: number }).reserved * Number(environmentOf(f).DATABASE_POOL_MAX), 0);
    const db = one('Postgres', 'Database');
    const group: { parameters?: unknown } = { parameters: [{ name: 'rds.force_ssl', value: '0' }] };
    (db.args.transform as { parameterGroup(a: typeof group): void }).parameterGroup(group);
    const parameters = resolveValue(group.parameters) as { name: string; value: string }[];
    const limit = Number(parameters.find((p) => p.name === 'max_connections')?.value);
    expect(limit).toBeGreaterThan(0);
    expect(replicas * perReplica + lambdas).toBeLessThan(limit);
    // docs/OPERATIONS.md shows the same sum.
    const operations = readFileSync(resolve(import.meta.dirname, '../docs/OPERATIONS.md'), 'utf8');
    expect(operations).toContain(`${replicas} × (${env.DATABASE_POOL_MAX} + ${env.DATABASE_READ_POOL_MAX}) + ${lambdas / Number(environmentOf(one('Function', 'Jwks')).DATABASE_POOL_MAX)} × ${environmentOf(one('Function', 'Jwks')).DATABASE_POOL_MAX} = ${replicas * perReplica + lambdas} < ${limit}`);
  });

  it('one Redis endpoint without cluster mode (packages/store speaks to one node)', () => {
    expect(one('Redis', 'Store').args.cluster).toBe(false);
  });
});

describe('the route table', () => {
  const table = routeTable(['starfall']);
  const target = (path: string) => {
    const t = matchRoute(table, path).target;
    return t.kind === 'function' ? t.function : t.kind;
  };

  it('matches like the router: longest pattern at a segment boundary', () => {
    expect(target('/api/auth/jwks')).toBe('jwks');
    expect(target('/api/worlds/validate')).toBe('worldValidate');
    expect(target('/api/worlds/w1')).toBe('service');
    expect(target('/api/partners/starfall/token')).toBe('service');
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
