import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import pg from 'pg';

/**
 * A logical backup of the platform's database (issue 51, point 4; docs/OPERATIONS.md, "Backups and
 * restore"), independent of the server's version: it needs no pg_dump of the server's major
 * version, and the same file restores into PostgreSQL or into the embedded default.
 *
 * The file is JSON lines: a header (the format, the migrations the schema was made by, the
 * tables in foreign-key order), then for each table a `{"table", "columns"}` line (the columns a
 * restore writes: all but generated ones) and one line per row (`[to_jsonb(row)]`), then the sequences' positions, then a
 * trailer with every table's row count (a file cut short is refused). Every table is read in one
 * REPEATABLE READ, read-only snapshot, so the backup is one consistent moment while the database
 * keeps serving.
 *
 * The schema is not in the file: a restore applies the same migrations to an empty database
 * (the release that made the backup, or any with the same migrations), then loads the rows with
 * triggers and foreign-key checks off (`session_replication_role = replica`: what the triggers
 * maintain, such as search terms and player counts, is restored as it was, not counted again).
 */

export const BACKUP_FORMAT = 'yumina-logical-backup/1';
const BATCH = 500;

interface Header {
  format: string;
  takenAt: string;
  migrations: string[];
  tables: string[];
}

export interface BackupSummary {
  migrations: number;
  rows: Record<string, number>;
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The public schema's tables, parents before the tables whose foreign keys point at them. */
async function tablesInOrder(client: pg.ClientBase): Promise<string[]> {
  const { rows: tables } = await client.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by c.relname`,
  );
  const { rows: edges } = await client.query<{ child: string; parent: string }>(
    `select c.relname as child, p.relname as parent from pg_constraint k
       join pg_class c on c.oid = k.conrelid join pg_class p on p.oid = k.confrelid
       join pg_namespace n on n.oid = c.relnamespace
      where k.contype = 'f' and n.nspname = 'public' and c.oid <> p.oid`,
  );
  const parents = new Map<string, Set<string>>(tables.map((t) => [t.name, new Set()]));
  for (const e of edges) parents.get(e.child)?.add(e.parent);
  const order: string[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (name: string) => {
    if (state.get(name)) return; // done, or a cycle (its rows load with the checks off anyway)
    state.set(name, 'visiting');
    for (const parent of parents.get(name) ?? []) visit(parent);
    state.set(name, 'done');
    order.push(name);
  };
  for (const t of tables) visit(t.name);
  return order;
}

/** The columns a restore writes: all but generated ones. */
async function writableColumns(client: pg.ClientBase, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select a.attname as name from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relname = $1 and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
      order by a.attnum`,
    [table],
  );
  return rows.map((r) => r.name);
}

async function sequencesOf(client: pg.ClientBase): Promise<{ name: string }[]> {
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind = 'S' order by 1`,
  );
  return rows;
}

/**
 * Writes a backup of the database at `url` to `file`; what it holds. `snapshot`: a snapshot another
 * transaction exported (`pg_export_snapshot()`), to read exactly the moment it sees.
 */
export async function backupDatabase(url: string, file: string, options: { snapshot?: string } = {}): Promise<BackupSummary> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const out = createWriteStream(file, { mode: 0o600 });
  const write = async (line: unknown) => {
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
  };
  const rows: Record<string, number> = {};
  try {
    await client.query('begin isolation level repeatable read read only');
    if (options.snapshot) {
      if (!/^[0-9A-F-]+$/i.test(options.snapshot)) throw new Error(`not a snapshot id: ${JSON.stringify(options.snapshot)}`);
      await client.query(`set transaction snapshot '${options.snapshot}'`);
    }
    const migrations = (await client.query<{ name: string }>('select name from schema_migrations order by name')).rows.map((r) => r.name);
    const tables = await tablesInOrder(client);
    const header: Header = { format: BACKUP_FORMAT, takenAt: new Date().toISOString(), migrations, tables };
    await write(header);
    for (const table of tables) {
      const columns = await writableColumns(client, table);
      await write({ table, columns });
      rows[table] = 0;
      // a cursor: a large table never sits in memory whole
      // as text, never parsed here: a bigint beyond 2^53 keeps every digit
      await client.query(`declare rows_of cursor for select to_jsonb(t)::text as r from ${ident(table)} t`);
      for (;;) {
        const batch = await client.query<{ r: string }>(`fetch ${BATCH} from rows_of`);
        // a row is a one-element array (a record line is an object)
        for (const row of batch.rows) if (!out.write(`[${row.r}]\n`)) await once(out, 'drain');
        rows[table] += batch.rows.length;
        if (batch.rows.length < BATCH) break;
      }
      await client.query('close rows_of');
    }
    const sequences: Record<string, { value: string; called: boolean }> = {};
    for (const { name } of await sequencesOf(client)) {
      const { rows: s } = await client.query<{ last_value: string; is_called: boolean }>(`select last_value::text, is_called from ${ident(name)}`);
      sequences[name] = { value: s[0]!.last_value, called: s[0]!.is_called };
    }
    await write({ sequences });
    await write({ end: true, rows });
    await client.query('commit');
    return { migrations: migrations.length, rows };
  } finally {
    await client.end().catch(() => {});
    out.end();
    await once(out, 'close');
  }
}

/**
 * Loads a backup into the database at `url`, which the same migrations made and which holds no
 * rows of its own yet but what those migrations wrote (they are replaced). `provision`: the
 * statements that make the tables the server creates itself rather than by a migration (the
 * companion's notebook table, containers/api/src/companion/table.ts), run first. All in one
 * transaction: a file that is cut short or does not fit leaves the database as it was.
 */
export async function restoreDatabase(url: string, file: string, options: { provision?: readonly string[] } = {}): Promise<BackupSummary> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity })[Symbol.asyncIterator]();
  const nextLine = async (): Promise<string> => {
    const { value, done } = await lines.next();
    if (done) throw new Error('The backup ends early (no trailer): it was cut short.');
    return value as string;
  };
  const next = async (): Promise<unknown> => JSON.parse(await nextLine()) as unknown;
  try {
    const header = (await next()) as Header;
    if (header?.format !== BACKUP_FORMAT) throw new Error(`Not a backup of this platform (format ${JSON.stringify(header?.format)}, expected ${BACKUP_FORMAT}).`);
    const have = (await client.query<{ name: string }>('select name from schema_migrations order by name')).rows.map((r) => r.name);
    if (have.join('\n') !== header.migrations.join('\n')) {
      const missing = header.migrations.filter((m) => !have.includes(m));
      const extra = have.filter((m) => !header.migrations.includes(m));
      throw new Error(
        `The target's schema differs from the backup's: restore with the release that made it (migrations missing here: ${missing.join(', ') || 'none'}; here but not in the backup: ${extra.join(', ') || 'none'}).`,
      );
    }
    await client.query('begin');
    await client.query(`set local session_replication_role = replica`);
    for (const statement of options.provision ?? []) await client.query(statement);
    const present = new Set(await tablesInOrder(client));
    const absent = header.tables.filter((t) => !present.has(t));
    if (absent.length) throw new Error(`The backup holds tables the target does not have (${absent.join(', ')}): restore with the release that made it.`);
    // every table of the target: what the migrations (or the provisioning) wrote is replaced, the
    // migrations' own record too (the same names, checked above, with their first dates)
    const tables = [...present];
    if (tables.length) await client.query(`truncate ${tables.map(ident).join(', ')}`);
    const rows: Record<string, number> = {};
    let table: { table: string; columns: string[] } | undefined;
    let batch: string[] = [];
    const flush = async () => {
      if (!table || batch.length === 0) return;
      // every column read back by its own type from its JSON form (jsonb_populate_recordset)
      const list = table.columns.map(ident).join(', ');
      await client.query(`insert into ${ident(table.table)} (${list}) overriding system value select ${list} from jsonb_populate_recordset(null::${ident(table.table)}, $1::jsonb)`, [`[${batch.join(',')}]`]);
      rows[table.table] = (rows[table.table] ?? 0) + batch.length;
      batch = [];
    };
    for (;;) {
      const text = await nextLine();
      if (text.startsWith('[')) {
        // a row: its JSON text as it was written (not parsed: every digit of a bigint kept)
        if (!table) throw new Error('The backup has a row before any table.');
        batch.push(text.slice(1, -1));
        if (batch.length >= BATCH) await flush();
        continue;
      }
      await flush();
      const record = JSON.parse(text) as { table?: string; columns?: string[]; sequences?: Record<string, { value: string; called: boolean }>; end?: boolean; rows?: Record<string, number> };
      if (record.table !== undefined) {
        table = { table: record.table, columns: record.columns ?? [] };
        rows[record.table] = 0;
      } else if (record.sequences) {
        for (const [name, s] of Object.entries(record.sequences)) await client.query('select setval($1::regclass, $2::bigint, $3)', [ident(name), s.value, s.called]);
      } else if (record.end) {
        const expected = record.rows ?? {};
        for (const [name, count] of Object.entries(expected)) {
          if ((rows[name] ?? 0) !== count) throw new Error(`The backup's table ${name} should hold ${count} rows, it held ${rows[name] ?? 0}.`);
        }
        break;
      }
    }
    await client.query('commit');
    return { migrations: header.migrations.length, rows };
  } catch (err) {
    await client.query('rollback').catch(() => {});
    throw err;
  } finally {
    await client.end().catch(() => {});
  }
}
