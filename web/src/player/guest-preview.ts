/**
 * Guest preview: a published world tried without an account (seed 002 §5). The page holds the
 * conversation and the state; each turn goes to POST /api/worlds/:id/preview/turn; nothing is
 * stored. Everything that would persist answers "sign in" (REQUIRES_AUTH).
 */
import type { SandboxCapabilities } from '@yumina/sandbox';
import { api } from '../lib/api.ts';
import type { EngineEffects, PlayerMessage, PlayerWorldState, SessionData, WorldData } from './player-types.ts';

export const PREVIEW_SESSION_ID = 'preview';

export class SignInRequired extends Error {
  readonly code = 'REQUIRES_AUTH';
  constructor(what = 'This') {
    super(`${what} needs an account: sign in to keep playing.`);
  }
}

function message(id: string, position: number, role: PlayerMessage['role'], content: string, state: PlayerWorldState | null, swipes?: string[]): PlayerMessage {
  return {
    id,
    position,
    role,
    content,
    status: 'complete',
    errorMessage: null,
    stateChanges: [],
    swipes: (swipes ?? (role === 'assistant' ? [content] : [])).map((c) => ({ content: c, snapshot: state })),
    activeSwipeIndex: 0,
    stateSnapshot: state,
    model: null,
    tokenCount: null,
    generationTimeMs: null,
    compacted: false,
    attachments: [],
    createdAt: new Date().toISOString(),
  };
}

export interface Preview {
  world: WorldData;
  data: SessionData;
  capabilities: SandboxCapabilities;
}

/** The preview of a published world, or null when there is none (not published, or no such world). */
export async function loadPreview(worldId: string): Promise<Preview | null> {
  const preview = await api<{ world: WorldData['world']; coverUrl?: string | null; avatarUrl?: string | null; state: PlayerWorldState; greetings: string[]; capabilities: SandboxCapabilities }>(
    `/api/worlds/${encodeURIComponent(worldId)}/preview`,
  ).catch(() => null);
  if (!preview) return null;
  const now = new Date().toISOString();
  const messages = preview.greetings.length ? [message('preview-0', 0, 'assistant', preview.greetings[0]!, preview.state, preview.greetings)] : [];
  return {
    world: { id: worldId, world: preview.world, coverUrl: preview.coverUrl ?? null, avatarUrl: preview.avatarUrl ?? null },
    data: {
      session: { id: PREVIEW_SESSION_ID, worldId, title: preview.world.name, messageCount: messages.length, branchedFrom: null, memory: '', state: preview.state, createdAt: now, updatedAt: now },
      messages,
    },
    capabilities: preview.capabilities,
  };
}

/** One guest turn: the player's message and the reply appended, the state from the engine. */
export async function previewTurn(worldId: string, data: SessionData, text: string): Promise<{ data: SessionData; effects: EngineEffects }> {
  const history = data.messages.filter((m) => m.role !== 'system' && m.status === 'complete').map((m) => ({ role: m.role as 'user' | 'assistant', content: m.content }));
  const answer = await api<{ displayText: string; state: PlayerWorldState } & EngineEffects>(`/api/worlds/${encodeURIComponent(worldId)}/preview/turn`, {
    json: { message: text, history: history.slice(-40), state: data.session.state, seed: 'preview' },
  });
  const n = data.messages.length;
  const messages = [...data.messages, message(`preview-${n}`, n, 'user', text, null), message(`preview-${n + 1}`, n + 1, 'assistant', answer.displayText, answer.state)];
  return {
    data: { session: { ...data.session, state: answer.state, messageCount: messages.length, updatedAt: new Date().toISOString() }, messages },
    effects: answer,
  };
}
