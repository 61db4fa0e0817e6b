import { z } from 'zod';
import { worldDefinitionSchema } from './world-schema.ts';

/**
 * The structural part of WorldDefinition 20.0.0 as JSON Schema (draft 2020-12), for editors and
 * authoring tools (autocomplete, inline bounds). It describes what an author may write, so
 * defaulted fields are optional. Cross-field rules (unique ids, references, reserved variable
 * ids, defaults matching their type) are not expressible here: validateWorld is the authority.
 */
export function worldJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(worldDefinitionSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}
