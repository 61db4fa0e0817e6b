import type { Queryable } from '@yumina/db';
import type { Persona as EnginePersona } from '@yumina/world';
import { activePersona } from '../accounts/personas.ts';

/**
 * The account's active persona as the world engine reads it (seed 002 §2.8): `{{user}}` is its
 * name, `{{persona_appearance}}`, `{{persona_personality}}` and `{{persona_backstory}}` its details,
 * `{{persona}}` its description (built from the details when the description is empty).
 */
export async function enginePersona(db: Queryable, accountId: string): Promise<EnginePersona | null> {
  return enginePersonaOf(await activePersona(db, accountId));
}

/** The same from a persona already read (a turn reads it with its session). */
export function enginePersonaOf(persona: { name: string; description: string; appearance: string; personality: string; backstory: string } | null): EnginePersona | null {
  if (!persona) return null;
  return {
    name: persona.name,
    ...(persona.description.trim() ? { description: persona.description } : {}),
    ...(persona.appearance ? { appearance: persona.appearance } : {}),
    ...(persona.personality ? { personality: persona.personality } : {}),
    ...(persona.backstory ? { backstory: persona.backstory } : {}),
  };
}
