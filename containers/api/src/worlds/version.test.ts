import { randomBytes } from 'node:crypto';
import type { DbPool } from '@yumina/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, type MigratedDatabase } from '../../../../tests/support/postgres.ts';
import { type VersionStamp, worldForViewer } from './version.ts';

const id = (prefix: string) => `${prefix}_${randomBytes(16).toString('base64url')}`;

/** The per-process cache of parsed versions behind a stamp: a new publication or a held edit is never served stale. */
describe('worldForViewer with a stamp (real PostgreSQL)', () => {
  let database: MigratedDatabase;
  let db: DbPool;
  const stamp = async (worldId: string): Promise<VersionStamp | null> => {
    const { rows } = await db.query<VersionStamp & Record<string, unknown>>(
      'select owner_id, status, revision, updated_at, live_revision, live_updated_at, live_definition is not null as has_live from worlds where id = $1',
      [worldId],
    );
    return rows[0] ?? null;
  };
  const definition = (name: string) => JSON.stringify({ name, marker: name });

  beforeAll(async () => {
    database = await createMigratedDatabase();
    db = database.db;
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('serves the author each saved edit, other players the live version until the next publication, and nobody an unpublished world', async () => {
    const owner = id('acc');
    const player = id('acc');
    for (const a of [owner, player]) await db.query(`insert into accounts (id, email, display_name) values ($1, $2, 'A')`, [a, `${a}@example.com`]);
    const worldId = id('wld');
    await db.query(`insert into worlds (id, owner_id, name, description, tags, language, definition) values ($1, $2, 'W', '', '{}', null, $3)`, [worldId, owner, definition('v1')]);
    const publish = () =>
      db.query(`update worlds set status = 'published', live_revision = revision, live_definition = definition, live_name = name, live_updated_at = clock_timestamp() where id = $1`, [worldId]);
    const save = (name: string) => db.query(`update worlds set definition = $2, revision = revision + 1, updated_at = clock_timestamp() where id = $1`, [worldId, definition(name)]);
    const marker = async (accountId: string) => ((await worldForViewer(db, worldId, { accountId }, await stamp(worldId))).world as unknown as { marker: string }).marker;

    await expect(marker(player)).rejects.toMatchObject({ statusCode: 404 });
    expect(await marker(owner)).toBe('v1');
    await publish();
    expect(await marker(player)).toBe('v1');
    await save('v2'); // an edit (held for review, say): only the working copy changes
    expect(await marker(owner)).toBe('v2');
    expect(await marker(player)).toBe('v1');
    await publish();
    expect(await marker(player)).toBe('v2');
    await save('v3');
    await db.query(`update worlds set status = 'unpublished' where id = $1`, [worldId]);
    await expect(marker(player)).rejects.toMatchObject({ statusCode: 404 });
    expect(await marker(owner)).toBe('v3');
    await expect(worldForViewer(db, worldId, { accountId: owner }, null)).rejects.toMatchObject({ statusCode: 404 });
  });

  it('hands out the cached version frozen (readers share it)', async () => {
    const owner = id('acc');
    await db.query(`insert into accounts (id, email, display_name) values ($1, $2, 'A')`, [owner, `${owner}@example.com`]);
    const worldId = id('wld');
    await db.query(`insert into worlds (id, owner_id, name, description, tags, language, definition) values ($1, $2, 'W', '', '{}', null, $3)`, [worldId, owner, definition('f')]);
    const first = await worldForViewer(db, worldId, { accountId: owner }, await stamp(worldId));
    const again = await worldForViewer(db, worldId, { accountId: owner }, await stamp(worldId));
    expect(again).toBe(first);
    expect(Object.isFrozen(first.world)).toBe(true);
    // an unstamped read is the caller's own copy
    const own = await worldForViewer(db, worldId, { accountId: owner });
    expect(own).not.toBe(first);
    expect(Object.isFrozen(own.world)).toBe(false);
  });
});
