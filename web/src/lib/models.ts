/**
 * The model catalogue (GET /api/models): the models of the account's own AI connection and of the
 * platform, with pins and recent use. One reader for every picker: the model browser (/app/models,
 * which the companion opens), the player's model choice and Settings → AI connection.
 */
import { api } from './api.ts';

export interface CatalogueModel {
  id: string;
  name: string;
  provider: 'official' | 'private';
  contextLength: number | null;
}

export interface Catalogue {
  models: CatalogueModel[];
  pinned: string[];
  recent: string[];
  /** Sources that could not be listed (`private: …`, `official: …`). */
  errors: string[];
}

export function loadCatalogue(): Promise<Catalogue> {
  return api<Catalogue>('/api/models');
}

/** The account's own connection's models, pinned first, or why they could not be listed. */
export async function connectionModels(): Promise<{ models: CatalogueModel[]; error: string | null }> {
  const catalogue = await loadCatalogue();
  const pinned = new Set(catalogue.pinned);
  const models = catalogue.models.filter((m) => m.provider === 'private').sort((a, b) => Number(pinned.has(b.id)) - Number(pinned.has(a.id)));
  const error = catalogue.errors.find((e) => e.startsWith('private:'))?.slice('private:'.length).trim() ?? null;
  return { models, error };
}
