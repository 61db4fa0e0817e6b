/**
 * Issue 49 points 1–9 through the studio's routes (real PostgreSQL): a SillyTavern PNG card
 * imported here comes back from GET /api/worlds/:id/card.png as SillyTavern held it (read with
 * png-chunks-extract and @risuai/ccardlib), in its own picture, not re-encoded; an edit made in
 * the studio is written into it without losing the entry's SillyTavern settings; an uploaded
 * portrait goes into the card at its full size; GET /api/worlds/:id/card-report says in plain
 * words what the card holds and what it cannot.
 */
import { readFileSync } from 'node:fs';
import { CCardLib } from '@risuai/ccardlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser, startTestServer, type TestServer } from '../../../../tests/support/server.ts';
import { signUp } from '../../../../tests/support/sign-up.ts';
import { held, pictureChunks, rawData, readCard } from '../../../../tests/support/sillytavern-card-reader.ts';

type Json = Record<string, unknown>;
const harbor = new Uint8Array(readFileSync(new URL('../../../../tests/fixtures/cards/harbor-keeper.png', import.meta.url)));

describe('card export after a card import (real PostgreSQL)', () => {
  let server: TestServer;
  let author: Browser;

  beforeAll(async () => {
    server = await startTestServer();
    author = new Browser(server.url);
    await signUp(server, author, { email: `card-route-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Card author' });
  });
  afterAll(() => server?.stop());

  const importHarbor = async () => {
    const res = await author.fetch('/api/worlds/import?name=harbor-keeper.png', { method: 'POST', headers: { 'content-type': 'image/png' }, body: harbor as Uint8Array<ArrayBuffer> });
    expect(res.status).toBe(201);
    return (await res.json()) as { id: string; revision: number; world: Json & { entries: Json[] }; report: { assets: { role?: string }[] } };
  };
  const cardPngOf = async (id: string) => {
    const res = await author.fetch(`/api/worlds/${id}/card.png`);
    expect(res.status).toBe(200);
    return new Uint8Array(await res.arrayBuffer());
  };

  it('card.png is the imported card, as SillyTavern held it, in its own picture', async () => {
    const imported = await importHarbor();
    expect(imported.report.assets[0]!.role).toContain("the card's own picture is kept");
    const exported = await cardPngOf(imported.id);
    // The same picture: every chunk but the card's text, byte for byte (900 × 600, not a 512 × 768 WebP made PNG).
    expect(pictureChunks(exported)).toEqual(pictureChunks(harbor));
    expect(await sharp(Buffer.from(exported)).metadata()).toMatchObject({ format: 'png', width: 900, height: 600 });
    const original = readCard(harbor);
    const back = readCard(exported);
    expect(CCardLib.character.check(structuredClone(back))).toBe('v3');
    expect(held(back, 'v3')).toEqual(held(original, 'v3'));
    expect(rawData(back, original)).toEqual(original.data);
  });

  it('an edit in the studio goes into the card; the entry keeps its SillyTavern settings and the others stay as they were', async () => {
    const imported = await importHarbor();
    const world = structuredClone(imported.world);
    const fog = world.entries.find((entry) => entry.id === 'lore-1')!;
    fog.content = 'Fog rolls in every evening at seven now.';
    world.customTags = ['cozy', 'lighthouse', 'slow burn', 'fog'];
    const saved = await author.fetch(`/api/worlds/${imported.id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ world, revision: imported.revision }) });
    expect(saved.status).toBe(200);
    const res = await author.fetch(`/api/worlds/${imported.id}/card.json`);
    expect(res.status).toBe(200);
    const card = (await res.json()) as Json & { data: Json & { character_book: { entries: Json[] } } };
    const original = readCard(harbor) as Json & { data: Json & { character_book: { entries: Json[] } } };
    expect(card.data.character_book.entries[1]).toEqual({ ...original.data.character_book.entries[1], content: 'Fog rolls in every evening at seven now.' });
    expect(card.data.tags).toEqual(['cozy', 'lighthouse', 'slow burn', 'fog']);
    const { character_book: _book, tags: _tags, ...rest } = rawData(card, original);
    const { character_book: _originalBook, tags: _originalTags, ...originalRest } = original.data;
    expect(rest).toEqual(originalRest);
    expect(card.data.character_book.entries.filter((_, index) => index !== 1)).toEqual(original.data.character_book.entries.filter((_, index) => index !== 1));
  });

  it('an uploaded portrait goes into the card whole, as a PNG of its own size', async () => {
    const imported = await importHarbor();
    const jpeg = await sharp({ create: { width: 1200, height: 500, channels: 3, background: '#336699' } }).jpeg().toBuffer();
    const uploaded = await author.fetch(`/api/worlds/${imported.id}/portrait`, { method: 'POST', headers: { 'content-type': 'image/jpeg' }, body: jpeg });
    expect(uploaded.status).toBe(201);
    const exported = await cardPngOf(imported.id);
    expect(await sharp(Buffer.from(exported)).metadata()).toMatchObject({ format: 'png', width: 1200, height: 500 });
    const report = (await (await author.fetch(`/api/worlds/${imported.id}/card-report`)).json()) as { kept: string[] };
    expect(report.kept).toContain('The picture is the portrait you uploaded, written as a PNG at its full size (cards are PNG pictures).');
  });

  it('card-report says in plain words what the card holds and what it cannot; only the author asks', async () => {
    const imported = await importHarbor();
    const world = structuredClone(imported.world) as unknown as Json & { variables: Json[]; rules: Json[] };
    world.variables = [{ id: 'tide', name: 'Tide', type: 'number', defaultValue: 0 }];
    world.rules = [...(world.rules as Json[]), { id: 'high-tide', name: 'High tide', trigger: { type: 'turn-count', everyNTurns: 5 }, actions: [{ type: 'modify-variable', variableId: 'tide', operation: 'add', value: 1 }] }];
    const saved = await author.fetch(`/api/worlds/${imported.id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ world, revision: imported.revision }) });
    expect(saved.status).toBe(200);
    const res = await author.fetch(`/api/worlds/${imported.id}/card-report`);
    expect(res.status).toBe(200);
    const report = (await res.json()) as { kept: string[]; unwritten: string[] };
    expect(report.kept).toEqual([
      'This world came from a character card: the card goes back as it was — its version, the lorebook with every SillyTavern setting, its other extensions — with your edits here written into it.',
      "The picture is the world's own, as it was imported or uploaded: the same PNG, not re-encoded or resized.",
      'The whole world travels inside the card too: importing the card here again gives this world back.',
    ]);
    expect(report.unwritten).toEqual(['1 variable ("Tide") and the directives that change them: SillyTavern has no variables.', '1 rule ("High tide"): SillyTavern does not run rules.']);
    const stranger = new Browser(server.url);
    await signUp(server, stranger, { email: `card-report-stranger-${Date.now()}@example.com`, password: 'long enough pw', displayName: 'Stranger' });
    expect((await stranger.fetch(`/api/worlds/${imported.id}/card-report`)).status).toBe(404);
  });
});
