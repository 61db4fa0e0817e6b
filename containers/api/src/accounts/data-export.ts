import { findAccount } from '@yumina/accounts';
import { randomBytes } from 'node:crypto';
import { assetPath } from '@yumina/sandbox';
import type { Queryable } from '@yumina/db';
import type { AppContext } from '../context.ts';
import { accountMail } from './account-mail.ts';
import { isReservedAddress } from './email-address.ts';
import { pageLink } from './email-routes.ts';

/**
 * "Download my data" (issue 35, point 4): a JSON archive of the account, its settings, personas,
 * worlds and play sessions with every message. Never a secret: no password hash, no provider key
 * (not even its last digits), no login token. Built by the background worker below, never in a
 * request, in pages (sessions 50 at a time), and kept a week in the object store.
 */
export const EXPORT_FORMAT = 'yumina-account-export';
export const EXPORT_KEEP_DAYS = 7;
const SESSION_PAGE = 50;
export const exportKey = (accountId: string, exportId: string) => `exports/${accountId}/${exportId}.json`;

const iso = (d: Date | null) => (d ? d.toISOString() : null);
const json = (text: string | null, fallback: unknown = null): unknown => {
  if (text === null) return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

/** The archive as JSON text pieces, in order (the caller joins them): one account's data, read in pages. */
export async function buildArchive(db: Queryable, accountId: string, now = new Date()): Promise<Buffer[]> {
  const out: Buffer[] = [];
  const put = (s: string) => out.push(Buffer.from(s, 'utf8'));
  const account = await findAccount(db, accountId);
  if (!account) throw new Error('the account no longer exists');
  const identities = await db.query<{ provider: string; subject: string; linked_at: Date }>('select provider, subject, linked_at from oauth_identities where account_id = $1 order by provider', [accountId]);
  const ai = await db.query<{ base_url: string; default_model: string; private_enabled: boolean; kind: string; has_key: boolean; updated_at: Date }>(
    'select base_url, default_model, private_enabled, kind, key_ciphertext is not null as has_key, updated_at from ai_connections where account_id = $1',
    [accountId],
  );
  const billing = await db.query<{ plan: string; credits: string; preference: string }>('select plan, credits::text, preference from billing_accounts where account_id = $1', [accountId]);
  const worldChoices = await db.query<{ world_id: string; provider: string | null; model: string | null; updated_at: Date }>(
    'select world_id, provider, model, updated_at from world_ai_choices where account_id = $1 order by world_id',
    [accountId],
  );
  const companion = await db.query<{ occasional_visits: boolean; proactive_comments: boolean }>('select occasional_visits, proactive_comments from game_companion_preferences where account_id = $1', [accountId]);
  const ledger = await db.query<{ amount: string; kind: string; detail: string; created_at: Date }>(
    'select amount::text, kind, detail, created_at from credit_ledger where account_id = $1 order by created_at, id',
    [accountId],
  );
  const personas = await db.query<Record<string, unknown> & { created_at: Date }>(
    'select id, name, description, appearance, personality, backstory, avatar, is_active, created_at from personas where account_id = $1 order by created_at, id',
    [accountId],
  );
  const head = {
    format: EXPORT_FORMAT,
    version: 1,
    exportedAt: now.toISOString(),
    account: {
      id: account.id,
      email: isReservedAddress(account.email) ? null : account.email,
      emailVerified: account.emailVerified,
      username: account.username,
      displayName: account.displayName,
      picture: account.picture,
      createdAt: account.createdAt,
      linkedProviders: identities.rows.map((r) => ({ provider: r.provider, subject: r.subject, linkedAt: r.linked_at.toISOString() })),
    },
    settings: {
      // The key itself is a secret: only whether one is stored.
      aiConnection: ai.rows[0]
        ? { baseUrl: ai.rows[0].base_url, defaultModel: ai.rows[0].default_model, privateUse: ai.rows[0].private_enabled, kind: ai.rows[0].kind, keyStored: ai.rows[0].has_key, updatedAt: ai.rows[0].updated_at.toISOString() }
        : null,
      // What worlds' interfaces chose for the player in those worlds (setPreferredProvider, setModel).
      aiChoicesByWorld: worldChoices.rows.map((r) => ({ worldId: r.world_id, provider: r.provider, model: r.model, updatedAt: r.updated_at.toISOString() })),
      billing: billing.rows[0] ? { plan: billing.rows[0].plan, credits: Number(billing.rows[0].credits), sourceOfAi: billing.rows[0].preference } : null,
      companion: companion.rows[0] ? { occasionalVisits: companion.rows[0].occasional_visits, proactiveComments: companion.rows[0].proactive_comments } : null,
    },
    credits: ledger.rows.map((r) => ({ amount: Number(r.amount), kind: r.kind, detail: r.detail, at: r.created_at.toISOString() })),
    personas: personas.rows.map((p) => ({
      id: p.id,
      name: p.name,
      description: p.description,
      appearance: p.appearance,
      personality: p.personality,
      backstory: p.backstory,
      avatar: p.avatar,
      active: p.is_active,
      createdAt: p.created_at.toISOString(),
    })),
  };
  // The head without its closing brace; worlds and sessions follow as streamed arrays.
  put(JSON.stringify(head, null, 1).replace(/\n}$/, ''));

  put(',\n "worlds": [');
  const worlds = await db.query<{ id: string; name: string; description: string; tags: string[]; language: string | null; status: string; revision: number; definition: string; created_at: Date; updated_at: Date; published_at: Date | null }>(
    'select id, name, description, tags, language, status, revision, definition, created_at, updated_at, published_at from worlds where owner_id = $1 order by created_at, id',
    [accountId],
  );
  const assets = await db.query<{ id: string; world_id: string; name: string; kind: string; content_type: string; size: number }>(
    'select id, world_id, name, kind, content_type, size from world_assets where owner_id = $1 order by created_at, id',
    [accountId],
  );
  // the studio assistant's rounds on each world (requests, answers, cards and what became of them)
  const rounds = await db.query<{ id: string; world_id: string; kind: string; request: string; reply: string; status: string; operations: unknown; reason: string | null; applied_revision: number | null; created_at: Date }>(
    'select id, world_id, kind, request, reply, status, operations, reason, applied_revision, created_at from world_assistant_rounds where account_id = $1 order by created_at, id',
    [accountId],
  );
  worlds.rows.forEach((w, i) => {
    const world = {
      id: w.id,
      name: w.name,
      description: w.description,
      tags: w.tags,
      language: w.language,
      status: w.status,
      revision: w.revision,
      createdAt: w.created_at.toISOString(),
      updatedAt: w.updated_at.toISOString(),
      publishedAt: iso(w.published_at),
      assets: assets.rows.filter((a) => a.world_id === w.id).map((a) => ({ id: a.id, name: a.name, kind: a.kind, contentType: a.content_type, size: a.size, path: assetPath(w.id, a.id) })),
      definition: json(w.definition),
      assistant: rounds.rows
        .filter((r) => r.world_id === w.id)
        .map((r) => ({ id: r.id, kind: r.kind, request: r.request, reply: r.reply, status: r.status, operations: r.operations, reason: r.reason, appliedRevision: r.applied_revision, createdAt: r.created_at.toISOString() })),
    };
    put(`${i ? ',' : ''}\n  ${JSON.stringify(world)}`);
  });
  put('\n ],\n "sessions": [');

  let after = '';
  let first = true;
  for (;;) {
    const page = await db.query<{ id: string; world_id: string; world_name: string; title: string; memory: string; summary: string | null; message_count: number; branched_from: string | null; created_at: Date; updated_at: Date }>(
      `select s.id, s.world_id, w.name as world_name, s.title, s.memory, s.summary, s.message_count, s.branched_from, s.created_at, s.updated_at
         from chat_sessions s join worlds w on w.id = s.world_id
        where s.account_id = $1 and s.id > $2 order by s.id limit $3`,
      [accountId, after, SESSION_PAGE],
    );
    if (!page.rows.length) break;
    const ids = page.rows.map((s) => s.id);
    const messages = await db.query<{ session_id: string; position: number; role: string; content: string; swipes: string; active_swipe_index: number; status: string; model: string | null; created_at: Date }>(
      `select session_id, position, role, content, swipes, active_swipe_index, status, model, created_at
         from chat_messages where session_id = any($1::text[]) order by session_id, position`,
      [ids],
    );
    const checkpoints = await db.query<{ session_id: string; name: string; message_count: number; created_at: Date }>(
      'select session_id, name, message_count, created_at from chat_checkpoints where session_id = any($1::text[]) order by session_id, created_at',
      [ids],
    );
    for (const s of page.rows) {
      const session = {
        id: s.id,
        worldId: s.world_id,
        worldName: s.world_name,
        title: s.title,
        createdAt: s.created_at.toISOString(),
        updatedAt: s.updated_at.toISOString(),
        branchedFrom: s.branched_from,
        memory: s.memory,
        summary: s.summary,
        messages: messages.rows
          .filter((m) => m.session_id === s.id)
          .map((m) => ({ position: m.position, role: m.role, content: m.content, swipes: json(m.swipes, []), activeSwipe: m.active_swipe_index, status: m.status, model: m.model, createdAt: m.created_at.toISOString() })),
        checkpoints: checkpoints.rows.filter((c) => c.session_id === s.id).map((c) => ({ name: c.name, messageCount: c.message_count, createdAt: c.created_at.toISOString() })),
      };
      put(`${first ? '' : ','}\n  ${JSON.stringify(session)}`);
      first = false;
    }
    after = ids[ids.length - 1]!;
  }
  put('\n ]\n}\n');
  return out;
}

export interface ExportRow {
  id: string;
  account_id: string;
  status: 'queued' | 'running' | 'ready' | 'failed';
  created_at: Date;
  finished_at: Date | null;
  size_bytes: string | null;
  error: string | null;
  expires_at: Date | null;
}

export const exportView = (r: ExportRow) => ({
  id: r.id,
  status: r.status,
  createdAt: r.created_at.toISOString(),
  finishedAt: iso(r.finished_at),
  expiresAt: iso(r.expires_at),
  sizeBytes: r.size_bytes === null ? null : Number(r.size_bytes),
  error: r.error,
  download: r.status === 'ready' ? `/api/account/exports/${r.id}/download` : null,
});

export const newExportId = () => `exp_${randomBytes(16).toString('base64url')}`;

/**
 * The background worker of exports: each replica claims one queued export at a time (FOR UPDATE
 * SKIP LOCKED, a 15-minute claim that a crashed replica leaves to expire), builds it, stores it and
 * marks it ready. An archive that took longer than `notifyAfterMs` is announced by mail.
 */
export class ExportWorker {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  #stopped = true;
  constructor(
    private readonly ctx: AppContext,
    private readonly options: { pollMs?: number; notifyAfterMs?: number } = {},
  ) {}

  /**
   * A request wakes the worker (export-routes.ts); an idle replica only sweeps now and then
   * (`pollMs`, default 60 s) for an export another replica took and did not finish (its claim
   * expired) or one queued while no worker was awake.
   */
  start(): void {
    this.#stopped = false;
    this.#timer = setInterval(() => this.wake(), this.options.pollMs ?? 60_000);
    this.#timer.unref();
  }

  wake(): void {
    if (this.#stopped) return;
    // a wake while a build runs is looked at when it ends (an export queued meanwhile is not left to the sweep)
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = (async () => {
      try {
        do {
          this.#again = false;
          while (!this.#stopped && (await this.runOnce()));
        } while (this.#again && !this.#stopped);
      } catch (err) {
        this.ctx.log.warn({ type: 'account.export', err: (err as Error).message }, 'export worker: poll failed');
      } finally {
        this.#running = undefined;
      }
    })();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }

  /** Builds one due export; false when none was due. */
  async runOnce(): Promise<boolean> {
    const { db, objects, log } = { db: this.ctx.db.primary, objects: this.ctx.objects, log: this.ctx.log };
    const { rows } = await db.query<ExportRow & Record<string, unknown>>(
      `update account_exports e set status = 'running', started_at = now(), locked_until = now() + interval '15 minutes'
        where e.id = (select id from account_exports
                       where status = 'queued' or (status = 'running' and locked_until < now())
                       order by created_at limit 1 for update skip locked)
        returning e.*`,
    );
    const job = rows[0];
    if (!job) return false;
    const started = Date.now();
    try {
      const archive = Buffer.concat(await buildArchive(db, job.account_id));
      await objects.put(exportKey(job.account_id, job.id), archive, 'application/json');
      await db.query(
        `update account_exports set status = 'ready', finished_at = now(), locked_until = null, size_bytes = $2,
                expires_at = now() + make_interval(days => $3) where id = $1`,
        [job.id, archive.length, EXPORT_KEEP_DAYS],
      );
      log.info({ type: 'account.export', accountId: job.account_id, exportId: job.id, bytes: archive.length, ms: Date.now() - started }, 'data export ready');
      if (Date.now() - started > (this.options.notifyAfterMs ?? 30_000)) await this.#announce(job.account_id);
    } catch (err) {
      await db.query(`update account_exports set status = 'failed', finished_at = now(), locked_until = null, error = $2 where id = $1`, [
        job.id,
        'The archive could not be prepared. Try again; if it fails again, tell the operators.',
      ]);
      log.error({ type: 'account.export', accountId: job.account_id, exportId: job.id, err: (err as Error).message }, 'data export failed');
    }
    return true;
  }

  async #announce(accountId: string): Promise<void> {
    const account = await findAccount(this.ctx.db.primary, accountId);
    if (!account || isReservedAddress(account.email)) return;
    await this.ctx.mail.enqueue(this.ctx.db.primary, {
      kind: 'export-ready',
      accountId,
      to: account.email,
      ...accountMail.exportReady(account.displayName, pageLink(this.ctx, '/app/settings#data'), EXPORT_KEEP_DAYS),
    });
  }
}

/** Scheduled maintenance: archives past their week are deleted, with their rows. */
export async function purgeOldExports(ctx: AppContext): Promise<number> {
  const { rows } = await ctx.db.primary.query<{ id: string; account_id: string }>(
    `delete from account_exports where expires_at < now() or (status = 'failed' and created_at < now() - interval '7 days') returning id, account_id`,
  );
  for (const r of rows) await ctx.objects.delete(exportKey(r.account_id, r.id)).catch(() => {});
  return rows.length;
}
