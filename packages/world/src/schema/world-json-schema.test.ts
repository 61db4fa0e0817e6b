import { describe, expect, it } from 'vitest';
import { worldJsonSchema } from './world-json-schema.ts';

interface SchemaNode {
  type?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  default?: unknown;
  items?: SchemaNode;
  const?: unknown;
}

describe('worldJsonSchema', () => {
  it('describes the fields, bounds and defaults an author writes', () => {
    const schema = worldJsonSchema() as SchemaNode;
    const properties = schema.properties ?? {};
    expect(schema.required?.sort()).toEqual(['name', 'version']);
    expect(properties.version?.const).toBe('20.0.0');
    expect(properties.name?.maxLength).toBe(200);
    expect(properties.description?.maxLength).toBe(10000);
    const settings = properties.settings?.properties ?? {};
    expect(settings.temperature).toMatchObject({ minimum: 0, maximum: 2 });
    expect(settings.temperature?.default).toBe(1); // seed 002 §2.2's default
    expect(settings.topK?.default).toBeUndefined(); // topK and minP have none
    expect(settings.minP).toMatchObject({ minimum: 0, maximum: 1 });
    expect(settings.maxTokens?.default).toBe(12000);
    expect(settings.lorebookScanDepth?.default).toBe(2);
    expect(properties.bgmPlaylist).toBeDefined();
    const track = properties.audioTracks?.items?.properties ?? {};
    expect(track.volume).toMatchObject({ minimum: 0, maximum: 1 });
  });
});
