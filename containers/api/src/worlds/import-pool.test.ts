import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { type ImportJobResult, runImportJob } from './import-job.ts';
import { ImportPool, ImportPoolBusy } from './import-pool.ts';

const fixture = (name: string) => readFileSync(new URL(`../../../../tests/fixtures/worlds/${name}`, import.meta.url));

/** A World Info file padded past the inline size, so the pool sends it to a worker. */
function bigLorebook(): Uint8Array {
  const info = JSON.parse(fixture('world-info.json').toString('utf8')) as { entries: Record<string, { content: string }> };
  for (const entry of Object.values(info.entries)) entry.content += ' The tide remembers.'.repeat(4000);
  return new TextEncoder().encode(JSON.stringify(info));
}

const worldOf = (result: ImportJobResult) => (result.kind === 'done' && result.result.ok ? result.result.world : null);

describe('the import pool', () => {
  let pool: ImportPool | undefined;
  afterEach(() => pool?.close());

  it('runs a large job in a worker thread with the same result as inline, and a small one inline', async () => {
    pool = new ImportPool({ size: 1, inlineBytes: 64 * 1024 });
    const bytes = bigLorebook();
    expect(bytes.length).toBeGreaterThan(64 * 1024);
    const inline = await runImportJob({ bytes: bytes.slice(), contentType: 'application/octet-stream', fileName: 'Tides.json' });
    const worker = await pool.run({ bytes: bytes.slice(), contentType: 'application/octet-stream', fileName: 'Tides.json' });
    expect(pool.busy).toBe(0);
    const a = worldOf(inline)!;
    const b = worldOf(worker)!;
    expect(b.name).toBe('Tides');
    expect({ ...b, id: a.id }).toEqual(a);
    // A small job never starts a worker.
    const small = new ImportPool({ size: 1, inlineBytes: 64 * 1024 });
    expect(worldOf(await small.run({ bytes: fixture('card-v2.json'), contentType: 'application/octet-stream' }))?.name).toBe('Captain Vale');
    await small.close();
  }, 30_000);

  it('refuses at once when its queue is full, and a body error comes back as a result', async () => {
    pool = new ImportPool({ size: 1, maxQueued: 1, inlineBytes: 0 });
    const job = () => pool!.run({ bytes: bigLorebook(), contentType: 'application/octet-stream' });
    const first = job();
    const second = job();
    await expect(job()).rejects.toBeInstanceOf(ImportPoolBusy);
    expect(worldOf(await first)).not.toBeNull();
    expect(worldOf(await second)).not.toBeNull();
    expect(await pool.run({ bytes: new TextEncoder().encode('{"world": 1, "file": {"base64": "AA=="}}'), contentType: 'application/json' })).toMatchObject({ kind: 'bad-body', status: 400 });
  }, 30_000);
});
