/**
 * The world's interface in a room (docs/ROOMS.md, "The interface API in a room"): the state a
 * member's interface reads, from the room (the shared variables with the member's own per-player
 * values over them, `currentUser`, `players`, `room`, `canSendMessage` false for a spectator and
 * for a player out of turn), and the members it may call. A world's code is hostile: every path is
 * built by `apiPath` and reaches only this room's session and this world; what a room does not
 * offer (sessions, branches, checkpoints, models, AI calls) answers NOT_IN_ROOM, and what is the
 * host's (regenerate, edit, swipe, delete, restart) answers HOST_ONLY for the others.
 */
import { apiPath, type SandboxMessage, type SandboxState } from '@yumina/sandbox';
import { api } from '../lib/api.ts';
import { navigate } from '../lib/router.tsx';
import type { Account } from '../lib/api.ts';
import type { SandboxHandlers } from '../sandbox/SandboxHost.tsx';
import { sandboxEntries, sandboxMessage } from '../player/sandbox-bridge.ts';
import { CONNECTION_FAILURES } from '../player/TurnFailure.tsx';
import { writeBlock } from './RoomChat.tsx';
import type { RoomState } from './room-types.ts';
import type { RoomHandle } from './use-room.ts';

function refusal(code: string, message: string): Error & { code: string } {
  return Object.assign(new Error(message), { code });
}

async function done(work: unknown): Promise<undefined> {
  await work;
  return undefined;
}

const absolute = (url: string | null): string | null => (url?.startsWith('/') ? `${window.location.origin}${url}` : url);

/** The state reads of the sandbox API, for this member of the room. */
export function roomSandboxState(r: RoomHandle, account: Account | null): Partial<SandboxState> {
  const s = r.snap;
  const world = r.world;
  if (!s || !world) return {};
  const sessionId = s.session.id;
  const state = s.session.state;
  const own = state.playerVariables?.[s.me.accountId] ?? {};
  const me = s.members.find((m) => m.id === s.me.participantId);
  const messages = s.messages.filter((m) => !(m.role === 'assistant' && m.status === 'failed'));
  const failed = messages.slice(-2).find((m) => m.failure);
  const blocked = writeBlock(r);
  const replying = s.room.roundState === 'replying';
  const greeting = s.messages[0]?.role === 'assistant' && s.messages[0].position === 0 ? s.messages[0].content : '';
  return {
    variables: { ...state.variables, ...own },
    worldName: world.world.name,
    worldId: world.id,
    sessionId,
    currentUser: account ? { id: account.id, name: account.displayName, image: absolute(account.picture) } : null,
    user: { name: me?.name ?? account?.displayName ?? 'Player', avatar: absolute(me?.picture ?? account?.picture ?? null) },
    messages: messages.map((m): SandboxMessage => sandboxMessage(m, sessionId)),
    isStreaming: replying,
    streamingContent: r.streaming ? r.streaming.base + r.streaming.text : '',
    pendingChoices: !replying && messages.at(-1)?.role === 'assistant' ? (state.pendingChoices ?? []) : [],
    error: r.error,
    turnError: failed?.failure
      ? { code: failed.failure.code, message: failed.failure.message, messageId: failed.id, connection: CONNECTION_FAILURES.has(failed.failure.code) }
      : null,
    readOnly: s.me.role === 'spectator' || !!s.room.endedAt,
    entries: sandboxEntries(world.world.entries),
    greetingContent: greeting,
    mode: 'session',
    capabilities: { canSendMessage: !blocked, canPersistSession: true, canUseSessionApis: true, requiresAuth: true },
    canvasMode: 'custom',
    language: world.world.language ?? (typeof navigator === 'undefined' ? 'en' : navigator.language),
    players: s.members.map((m) => ({ id: m.id, accountId: m.accountId, name: m.name, role: m.role, online: m.online })),
    room: { triggerMode: s.room.triggerMode, speechMode: s.room.speechMode, roundState: s.room.roundState, turnParticipantId: s.room.turnParticipantId },
  };
}

/** The remote members of the sandbox API, answered by the room's routes. */
export function roomSandboxHandlers(r: RoomHandle): SandboxHandlers {
  const s = r.snap;
  const sessionId = s?.session.id ?? '';
  const worldId = r.world?.id ?? '';
  const notInRoom = (member: string) => () => {
    throw refusal('NOT_IN_ROOM', `yumina.${member} is not available in a room.`);
  };
  const hostOnly = <A extends unknown[]>(member: string, run: (...args: A) => Promise<unknown>) => {
    return async (...args: A): Promise<undefined> => {
      if (!r.isHost) throw refusal('HOST_ONLY', `Only the room's host may call yumina.${member}.`);
      await run(...args);
      return undefined;
    };
  };
  const session = (...parts: string[]) => apiPath('sessions', sessionId, ...parts);
  /** An interface's action on the room's shared state: everyone gets it on the stream, this member at once. */
  const dispatch = async (path: string, method: string, json?: unknown) => {
    const answer = await api<{ state?: RoomState; notifications?: unknown[] }>(path, { method, ...(json === undefined ? {} : { json }) });
    if (answer.state) r.showState(answer.state);
    for (const n of answer.notifications ?? []) {
      const note = n as { message?: string; text?: string } | string;
      r.toast(typeof note === 'string' ? note : (note.message ?? note.text ?? ''));
    }
  };
  const lastReply = () => {
    const last = s?.messages.at(-1);
    return last?.role === 'assistant' ? last : null;
  };
  return {
    sendMessage: async (text) => {
      const blocked = writeBlock(r);
      if (blocked) throw refusal(s?.me.role === 'spectator' ? 'SPECTATOR' : 'NOT_YOUR_TURN', blocked);
      if (!(await r.send(text))) throw refusal('NOT_SENT', r.error ?? 'The message was not sent.');
    },
    setComposerDraft: (text) => done(r.setDraft(text)),
    regenerateMessage: hostOnly('regenerateMessage', async (id: string) => {
      const last = s?.messages.at(-1);
      if (!last || (last.id !== id && !(last.failure && last.id === id))) throw refusal('NOT_FOUND', 'In a room, only the last reply (or a failed round) can be regenerated.');
      await r.regenerate();
    }),
    continueLastMessage: hostOnly('continueLastMessage', () => r.continueReply()),
    stopGeneration: hostOnly('stopGeneration', () => r.stop()),
    editMessage: hostOnly('editMessage', (id: string, content: string) => api(session('messages', id), { method: 'PATCH', json: { content } })),
    deleteMessage: hostOnly('deleteMessage', (id: string) => api(session('messages', id), { method: 'DELETE' })),
    swipeMessage: hostOnly('swipeMessage', async (id: string, direction: 'left' | 'right') => {
      if (lastReply()?.id !== id) throw refusal('NOT_FOUND', 'Only the last reply can be swiped; that id names none.');
      await api(session('swipe', direction), { method: 'POST' });
    }),
    restartChat: hostOnly('restartChat', () => api(session('restart'), { method: 'POST' })),
    revertToMessage: hostOnly('revertToMessage', (id: string) => api(session('revert', id), { method: 'POST' })),
    clearPendingChoices: () => done(api(session('choices'), { method: 'DELETE' })),
    getBranchContext: () => ({ sessionId: sessionId || null, branchedFrom: null, parentTitle: null, messageCount: s?.messages.length ?? 0 }),
    navigate: (path) => {
      const target = new URL(path, window.location.origin);
      if (target.origin !== window.location.origin) throw refusal('NAVIGATION_REFUSED', 'yumina.navigate goes only to pages of this site.');
      navigate(`${target.pathname}${target.search}${target.hash}`);
    },
    // The room's shared state, or (targetUserId) a member's own values: the server decides who may set whose.
    setVariable: (id, value, options) =>
      done(
        options?.scope === 'global'
          ? api(session('variables', id), { method: 'PUT', json: { value, scope: 'global' } })
          : dispatch(session('variables', id), 'PUT', { value, scope: 'session', ...(options?.targetUserId ? { targetUserId: options.targetUserId } : {}) }),
      ),
    executeAction: (id, payload) => done(id.includes(':') ? dispatch(session('events'), 'POST', { ...(payload ?? {}), type: id }) : dispatch(session('actions', id), 'POST')),
    injectContext: (message, options) => done(dispatch(session('context'), 'POST', { message, role: options?.role ?? 'system' })),
    'storage.get': async (key) => {
      const entries = (await api<{ entries: Record<string, string> }>(apiPath('worlds', worldId, 'storage'))).entries;
      return Object.hasOwn(entries, key) ? entries[key]! : null;
    },
    'storage.set': (key, value) => done(api(apiPath('worlds', worldId, 'storage', key), { method: 'PUT', json: { value } })),
    'storage.remove': (key) => done(api(apiPath('worlds', worldId, 'storage', key), { method: 'DELETE' })),
    showToast: (message, kind) => done(r.toast(message, kind ?? 'info')),
    copyToClipboard: async (text) => {
      await navigator.clipboard.writeText(text);
      r.toast('Copied to the clipboard.', 'success');
    },
    // music and sounds, immersive mode: nothing plays or changes in a room yet; the calls succeed quietly
    playAudio: () => undefined,
    stopAudio: () => undefined,
    setAudioVolume: () => undefined,
    toggleImmersive: () => undefined,
    createSession: notInRoom('createSession'),
    deleteSession: notInRoom('deleteSession'),
    listSessions: notInRoom('listSessions'),
    branchFromMessage: notInRoom('branchFromMessage'),
    saveCheckpoint: notInRoom('saveCheckpoint'),
    loadCheckpoints: notInRoom('loadCheckpoints'),
    restoreCheckpoint: notInRoom('restoreCheckpoint'),
    deleteCheckpoint: notInRoom('deleteCheckpoint'),
    switchGreeting: notInRoom('switchGreeting'),
    setModel: notInRoom('setModel'),
    getModels: notInRoom('getModels'),
    pinModel: notInRoom('pinModel'),
    unpinModel: notInRoom('unpinModel'),
    setPreferredProvider: notInRoom('setPreferredProvider'),
    'ai.complete': notInRoom('ai.complete'),
  };
}
