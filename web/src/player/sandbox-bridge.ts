/**
 * The world's interface wired to the real player: every state field of seed 002 §4 built from the
 * session, and every remote method answered by the platform's routes (see docs/SANDBOX.md).
 */
import { type AiCompleteOptions, apiPath, type SandboxMessage, type SandboxState } from '@yumina/sandbox';
import { api } from '../lib/api.ts';
import { navigate } from '../lib/router.tsx';
import type { SandboxHandlers } from '../sandbox/SandboxHost.tsx';
import { readEvents } from './event-stream.ts';
import { SignInRequired } from './guest-preview.ts';
import { playInterfaceAudio, stopInterfaceAudio } from './interface-audio.ts';
import type { Player } from './use-player.ts';
import type { Confirm } from './ConfirmDialog.tsx';
import { CONNECTION_FAILURES } from './TurnFailure.tsx';
import type { Checkpoint, PlayerMessage, PlayerPreferences, PlayerSession, WorldEntryDef } from './player-types.ts';
import { refreshHeader } from '../shell/header-data.ts';

export function sandboxMessage(m: PlayerMessage, sessionId: string): SandboxMessage {
  return {
    id: m.id,
    sessionId,
    role: m.role,
    content: m.content,
    rawContent: m.rawContent ?? m.content,
    status: m.status,
    errorMessage: m.errorMessage,
    stateChanges: m.stateChanges,
    stateSnapshot: m.stateSnapshot?.variables ?? null,
    swipes: m.swipes.map((s) => ({ content: s.content, stateSnapshot: s.snapshot?.variables ?? null })),
    activeSwipeIndex: m.activeSwipeIndex,
    model: m.model,
    tokenCount: m.tokenCount,
    generationTimeMs: m.generationTimeMs,
    compacted: m.compacted,
    attachments: m.attachments,
    createdAt: m.createdAt,
  };
}

/** A picture uploaded to the platform is a path of this origin: the frame (an opaque origin) needs it whole. */
const absolute = (url: string | null): string | null => (url?.startsWith('/') ? `${window.location.origin}${url}` : url);

/** The world's entries as the interface API's `entries` shows them (the player's and a room's). */
export function sandboxEntries(entries: readonly WorldEntryDef[] | undefined): SandboxState['entries'] {
  return (entries ?? []).map((e) => ({
    id: e.id,
    name: e.name,
    content: e.content,
    keywords: e.keywords ?? [],
    position: e.position ?? 0,
    section: e.section ?? 'system-presets',
    enabled: e.enabled !== false,
    role: e.role ?? 'custom',
    tags: e.tags ?? [],
  }));
}

/** Every state read of the sandbox API, from the player's data. */
export function sandboxState(p: Player): Partial<SandboxState> {
  const { world, data, account, persona, prefs } = p;
  if (!world || !data) return {};
  const sessionId = data.session.id;
  const greeting = data.messages[0]?.role === 'assistant' && data.messages[0].position === 0 ? data.messages[0].content : '';
  const userName = persona?.name ?? account?.displayName ?? world.world.settings?.playerName ?? 'Player';
  // A failed turn is not the world's message (issue 30 A2): a reply a failure left (older versions
  // kept them) is not among the interface's messages; the newest turn's failure is `turnError`.
  const messages = data.messages.filter((m) => !(m.role === 'assistant' && m.status === 'failed'));
  const failed = messages.slice(-2).find((m) => m.failure);
  return {
    variables: data.session.state.variables,
    globalVariables: prefs?.globalVariables ?? {},
    worldName: world.world.name,
    worldId: world.id,
    sessionId,
    currentUser: account ? { id: account.id, name: account.displayName, image: absolute(account.picture) } : null,
    user: { name: userName, avatar: absolute(persona?.avatar ?? account?.picture ?? null) },
    messages: messages.map((m) => sandboxMessage(m, sessionId)),
    isStreaming: p.busy,
    streamingContent: p.streaming,
    streamingReasoning: p.reasoning,
    pendingChoices: p.pendingChoices,
    // The last failure of a send or action (seed 002 §4): the page's, else the newest turn's.
    error: p.error ?? failed?.failure?.message ?? null,
    turnError: failed?.failure
      ? { code: failed.failure.code, message: failed.failure.message, messageId: failed.id, connection: CONNECTION_FAILURES.has(failed.failure.code) }
      : null,
    readOnly: p.guest ? !p.guest.canSendMessage : false,
    entries: sandboxEntries(world.world.entries),
    checkpoints: p.checkpoints,
    greetingContent: greeting,
    mode: p.guest ? 'guest-preview' : 'session',
    capabilities: p.guest ?? { canSendMessage: true, canPersistSession: true, canUseSessionApis: true, requiresAuth: true },
    canvasMode: p.canvasMode,
    selectedModel: prefs?.selectedModel ?? null,
    userPlan: prefs?.userPlan ?? null,
    preferredProvider: prefs?.preferredProvider ?? 'official',
    language: world.world.language ?? (typeof navigator === 'undefined' ? 'en' : navigator.language),
    bgmVolume: p.volumes.bgm,
    sfxVolume: p.volumes.sfx,
  };
}

async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Without clipboard permission: the classic selection copy.
    const area = document.createElement('textarea');
    area.value = text;
    area.setAttribute('readonly', '');
    area.style.position = 'fixed';
    area.style.opacity = '0';
    document.body.appendChild(area);
    area.select();
    const ok = document.execCommand('copy');
    area.remove();
    if (!ok) throw Object.assign(new Error('The browser refused to copy.'), { code: 'CLIPBOARD_REFUSED' });
  }
}

/** An error the frame receives as `{ code, message }`. */
function refusal(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

/** Waits for `work` and answers nothing: members documented to return nothing never pass a response body on. */
async function done(work: unknown): Promise<undefined> {
  await work;
  return undefined;
}

/** A session as listSessions and createSession document it, and nothing else. */
function sessionSummary(s: PlayerSession) {
  return { id: s.id, worldId: s.worldId, title: s.title, createdAt: s.createdAt, updatedAt: s.updatedAt, messageCount: s.messageCount };
}

/**
 * regenerateMessage(id) for any reply: the last one is regenerated in place (a new swipe); an
 * earlier one is replaced by a new reply to the same player message (what followed it goes). The
 * player's message of a failed newest turn (`turnError.messageId`): the turn is tried again.
 */
async function regenerate(p: Player, id: string): Promise<void> {
  const messages = p.data?.messages ?? [];
  const index = messages.findIndex((m) => m.id === id);
  if (index < 0) throw refusal('NOT_FOUND', 'No such message.');
  if (messages[index]!.failure && index >= messages.length - 2) return p.stream('regenerate');
  if (messages[index]!.role !== 'assistant') throw refusal('NOT_A_REPLY', 'Only a reply can be regenerated.');
  if (index === messages.length - 1) return p.stream('regenerate');
  const user = messages[index - 1];
  if (user?.role !== 'user') throw refusal('NOT_A_REPLY', 'This reply answers no player message.');
  await p.action(['messages', user.id], 'DELETE');
  await p.stream('messages', { content: user.content });
}

/** What a guest (preview, no account) may do: the rest answers REQUIRES_AUTH ("sign in"). */
const GUEST_METHODS = new Set<string>([
  'sendMessage',
  'setComposerDraft',
  'clearPendingChoices',
  'navigate',
  'getBranchContext',
  'playAudio',
  'stopAudio',
  'setAudioVolume',
  'toggleImmersive',
  'copyToClipboard',
  'showToast',
]);

/** Every remote method of seed 002 §4, answered by the platform (in guest preview, what a guest may do). */
export function sandboxHandlers(p: Player, confirm?: Confirm): SandboxHandlers {
  const handlers = sessionHandlers(p, confirm);
  if (!p.guest) return handlers;
  const guarded: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    guarded[name] = GUEST_METHODS.has(name)
      ? handler
      : () => {
          throw new SignInRequired(`yumina.${name}`);
        };
  }
  return guarded as SandboxHandlers;
}

/**
 * The handlers of a signed-in player. A world's code is hostile: the message protocol has already
 * refused ids and names of the wrong form (INVALID_ID); here every request path is built by
 * `apiPath` (each part one encoded segment), and each member reaches only routes of the open world
 * (`/api/worlds/<this world>/…`) and the open session (`/api/sessions/<open session>/…`), plus the
 * player's model choices. A session id from the frame is used only once this world's session list
 * holds it. Each member answers only the fields it documents.
 */
function sessionHandlers(p: Player, confirm?: Confirm): SandboxHandlers {
  const worldId = p.world?.id ?? '';
  const openSession = () => {
    const id = p.data?.session.id;
    if (!id) throw refusal('NO_SESSION', 'No session is open.');
    return id;
  };
  /** createSession and listSessions take a world id, but only this world's is served. */
  const thisWorld = (member: string, target: string) => {
    if (target !== worldId) throw refusal('OTHER_WORLD', `yumina.${member} reaches only this world's sessions: pass yumina.worldId.`);
  };
  /**
   * Whether `id` is one of this world's sessions, looked up in this world's own session list (page by
   * page): a session of another world is never read, listed or deleted, only "not found" here.
   */
  const requireSessionOfThisWorld = async (id: string) => {
    let cursor: string | null = null;
    for (let page = 0; page < 50; page++) {
      const list: { sessions: PlayerSession[]; nextCursor?: string | null } = await api(
        `${apiPath('worlds', worldId, 'sessions')}${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      if (list.sessions.some((s) => s.id === id)) return;
      cursor = list.nextCursor ?? null;
      if (!cursor) break;
    }
    throw refusal('NOT_FOUND', 'This world has no session with that id.');
  };
  return {
    // Chat actions
    sendMessage: (text) => done(p.stream('messages', { content: text })),
    editMessage: (id, content) => done(p.action(['messages', id], 'PATCH', { content })),
    deleteMessage: (id) => done(p.action(['messages', id], 'DELETE')),
    regenerateMessage: (id) => done(regenerate(p, id)),
    continueLastMessage: () => done(p.stream('continue')),
    stopGeneration: () => done(p.action(['stop'])),
    restartChat: () => done(p.action(['restart'])),
    swipeMessage: (id, direction) => {
      // Swipes move between the alternatives of the session's last reply: the id must name it.
      const last = p.data?.messages.at(-1);
      if (!last || last.id !== id || last.role !== 'assistant') throw refusal('NOT_FOUND', 'Only the last reply of the open session can be swiped; that id names none.');
      return done(p.action(['swipe', direction]));
    },
    setComposerDraft: (text) => done(p.setDraft(text)),
    clearPendingChoices: () => done(p.setPendingChoices([])),
    // Sessions
    revertToMessage: (id) => done(p.action(['revert', id])),
    branchFromMessage: async (id) => {
      const branch = await api<{ session: PlayerSession }>(apiPath('sessions', openSession(), 'branch', id), { method: 'POST' });
      await p.loadSessions();
      await p.switchSession(branch.session.id);
      return { sessionId: branch.session.id };
    },
    getBranchContext: () => {
      const s = p.data?.session;
      const parent = p.sessions.find((x) => x.id === s?.branchedFrom);
      return { sessionId: s?.id ?? null, branchedFrom: s?.branchedFrom ?? null, parentTitle: parent?.title ?? null, messageCount: s?.messageCount ?? 0 };
    },
    createSession: async (target) => {
      thisWorld('createSession', target);
      return sessionSummary(await p.createSession());
    },
    deleteSession: async (id) => {
      await requireSessionOfThisWorld(id);
      await api(apiPath('sessions', id), { method: 'DELETE' });
      const rest = await p.loadSessions();
      if (id === p.data?.session.id) {
        if (rest[0]) await p.switchSession(rest[0].id);
        else await p.createSession();
      }
    },
    listSessions: async (target) => {
      thisWorld('listSessions', target);
      const list = await api<{ sessions: PlayerSession[] }>(apiPath('worlds', worldId, 'sessions'));
      return list.sessions.map(sessionSummary);
    },
    navigate: (path) => {
      // The protocol admits only paths with one leading `/`; resolved here, they must stay on this site.
      const target = new URL(path, window.location.origin);
      if (target.origin !== window.location.origin) throw refusal('NAVIGATION_REFUSED', `yumina.navigate goes only to pages of this site; ${JSON.stringify(path.slice(0, 80))} is not one.`);
      navigate(`${target.pathname}${target.search}${target.hash}`);
    },
    // Checkpoints
    saveCheckpoint: async (name) => {
      const session = openSession();
      const cp = await api<Checkpoint>(apiPath('sessions', session, 'checkpoints'), { json: { name: name || `Checkpoint ${p.checkpoints.length + 1}` } });
      await p.refresh(session);
      return { id: cp.id, name: cp.name, messageCount: cp.messageCount, createdAt: cp.createdAt ?? new Date().toISOString() };
    },
    loadCheckpoints: async () =>
      (await api<{ checkpoints: Checkpoint[] }>(apiPath('sessions', openSession(), 'checkpoints'))).checkpoints.map((cp) => ({
        id: cp.id,
        name: cp.name,
        messageCount: cp.messageCount,
        createdAt: cp.createdAt ?? '',
      })),
    restoreCheckpoint: (id) => done(p.action(['checkpoints', id, 'restore'])),
    deleteCheckpoint: (id) => done(p.action(['checkpoints', id], 'DELETE')),
    // Game actions
    setVariable: async (id, value, options) => {
      if (options?.scope === 'global') {
        const answer = await api<{ globalVariables: Record<string, unknown> }>(apiPath('sessions', openSession(), 'variables', id), {
          method: 'PUT',
          json: { value, scope: 'global' },
        });
        p.setPrefs((prefs) => (prefs ? { ...prefs, globalVariables: answer.globalVariables } : prefs));
        return;
      }
      await p.dispatch(['variables', id], 'PUT', { value, scope: 'session' });
    },
    executeAction: async (id, payload) => {
      // A namespaced id (`spatial:zone-enter`) is a custom reaction event with the payload's members.
      if (id.includes(':')) await p.dispatch(['events'], 'POST', { ...(payload ?? {}), type: id });
      else await p.dispatch(['actions', id], 'POST', undefined);
    },
    injectContext: async (message, options) => {
      await p.dispatch(['context'], 'POST', { message, role: options?.role ?? 'system' });
    },
    // Audio
    playAudio: (trackId, options) => {
      const director = p.audio.current;
      const track = (p.world?.world.audioTracks ?? []).find((t) => t.id === trackId);
      if (!director || !track) throw refusal('NOT_FOUND', `This world has no audio track "${trackId}".`);
      playInterfaceAudio(director, track.type, trackId, options ?? {}, p.volumes.bgm);
    },
    stopAudio: (trackId, fadeDuration) => {
      if (p.audio.current) stopInterfaceAudio(p.audio.current, trackId, fadeDuration);
    },
    setAudioVolume: (type, volume) => done(p.setVolumes((v) => ({ ...v, [type]: volume }))),
    // Storage (this world's, this player's)
    'storage.get': async (key) => {
      const entries = (await api<{ entries: Record<string, string> }>(apiPath('worlds', worldId, 'storage'))).entries;
      return Object.hasOwn(entries, key) ? entries[key]! : null;
    },
    'storage.set': (key, value) => done(api(apiPath('worlds', worldId, 'storage', key), { method: 'PUT', json: { value } })),
    'storage.remove': (key) => done(api(apiPath('worlds', worldId, 'storage', key), { method: 'DELETE' })),
    // UI
    toggleImmersive: () => done(p.setCanvasMode((mode) => (mode === 'fullscreen' ? (p.world?.world.rootComponent ? 'custom' : 'chat') : 'fullscreen'))),
    switchGreeting: async (index) => {
      const first = p.data?.messages[0];
      if (!first || first.role !== 'assistant' || first.position !== 0 || (p.data?.messages.length ?? 0) > 1)
        throw refusal('NOT_AVAILABLE_NOW', 'The greeting can only be switched before the conversation starts.');
      if (index >= first.swipes.length) throw refusal('NOT_FOUND', `This world has ${first.swipes.length} greeting(s).`);
      const steps = index - first.activeSwipeIndex;
      for (let i = 0; i < Math.abs(steps); i++) await p.action(['swipe', steps > 0 ? 'right' : 'left']);
    },
    copyToClipboard: async (text) => {
      await copyText(text);
      p.toast('Copied to the clipboard.', 'success');
    },
    showToast: (message, kind) => done(p.toast(message, kind ?? 'info')),
    // Models (the player's own choices)
    // A world's model choice is the player's for this world only (issue 43 point 9), never account-wide.
    setModel: async (id) => {
      const answer = await api<{ selectedModel: string }>(apiPath('worlds', worldId, 'player', 'model'), { method: 'PUT', json: { model: id } });
      p.setPrefs((prefs) => (prefs ? { ...prefs, selectedModel: answer.selectedModel } : prefs));
    },
    getModels: async () => {
      const c = await api<{ models: { id: string; name: string; provider: string; contextLength: number | null }[]; pinned: string[]; recent: string[] }>('/api/models');
      return {
        models: c.models.map((m) => ({ id: m.id, name: m.name, provider: m.provider, contextLength: m.contextLength ?? 0 })),
        pinnedModels: c.pinned.filter((id) => typeof id === 'string'),
        recentlyUsed: c.recent.filter((id) => typeof id === 'string'),
      };
    },
    pinModel: (id) => done(api(apiPath('models', 'pins', id), { method: 'PUT' })),
    unpinModel: (id) => done(api(apiPath('models', 'pins', id), { method: 'DELETE' })),
    // For this world only; a switch to the platform's credits is asked of the player here, in the platform's page.
    setPreferredProvider: async (provider) => {
      type Answer = { ok: boolean; provider?: 'official' | 'private'; error?: string; consentRequired?: boolean };
      const path = apiPath('worlds', worldId, 'player', 'provider');
      let answer = await api<Answer>(path, { method: 'PUT', json: { provider } });
      if (answer.consentRequired) {
        if (!(await creditsAllowed(p, confirm))) return { ok: false, error: 'The player kept their own AI connection for this world.' };
        answer = await api<Answer>(path, { method: 'PUT', json: { provider, consent: true } });
      }
      if (answer.ok) await p.loadPrefs();
      return {
        ok: answer.ok === true,
        ...(answer.provider === 'official' || answer.provider === 'private' ? { provider: answer.provider } : {}),
        ...(typeof answer.error === 'string' ? { error: answer.error } : {}),
      };
    },
    // AI completion
    'ai.complete': (options: AiCompleteOptions, onDelta: (text: string) => void) => aiComplete(openSession(), options, onDelta),
  };
}

/** Worlds whose switch to credits the player declined on this page: they are not asked again until it reloads (no nagging). */
const declinedCredits = new Set<string>();

/** The player's consent, in the platform's own dialog, before a world switches its turns to the platform's credits. */
async function creditsAllowed(p: Player, confirm: Confirm | undefined): Promise<boolean> {
  const worldId = p.world?.id ?? '';
  if (!confirm || declinedCredits.has(worldId)) return false;
  const name = p.world?.world.name ?? 'This world';
  const allowed = await new Promise<boolean>((resolve) =>
    confirm(
      `“${name}” asks to write its replies with the platform's AI, paid with your credits, instead of your own AI connection. This applies to this world only. Allow it?`,
      () => resolve(true),
      () => resolve(false),
    ),
  );
  if (!allowed) declinedCredits.add(worldId);
  return allowed;
}

async function aiComplete(sessionId: string, options: AiCompleteOptions, onDelta: (text: string) => void): Promise<string> {
  const res = await fetch(apiPath('sessions', sessionId, 'ai', 'complete'), {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...options, stream: true }),
  });
  if (!res.ok) throw new Error(((await res.json().catch(() => null)) as { error?: { message: string } } | null)?.error?.message ?? `AI call failed (${res.status})`);
  let text = '';
  let failure: string | null = null;
  await readEvents(res, (event, payload) => {
    if (event === 'delta') {
      text += String(payload.text ?? '');
      onDelta(String(payload.text ?? ''));
    }
    if (event === 'error') failure = String(payload.message ?? 'AI call failed');
  });
  // An AI call may have cost platform credits: the header reads the balance again.
  refreshHeader();
  if (failure) throw new Error(failure);
  return text;
}

export type { PlayerPreferences };
