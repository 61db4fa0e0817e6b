/** The group scene routes (docs/GROUPS.md) as the pages read them. */
export type ReplyMode = 'natural' | 'in-turn' | 'choose' | 'everyone';
export type CardMode = 'swap' | 'join';

export interface GroupCharacter {
  id: string;
  name: string;
  worldId: string | null;
  muted: boolean;
  talkativeness: number;
  position: number;
  picture: string | null;
}

export interface GroupView {
  group: { replyMode: ReplyMode; cardMode: CardMode; autoReplies: number };
  /** The world the scene plays in: its state, rules and interface. */
  sceneWorldId: string | null;
  characters: GroupCharacter[];
}

export interface SceneSummary {
  id: string;
  title: string;
  messageCount: number;
  updatedAt: string;
  characters: string[];
}

/** What each reply mode means, in plain words (the pages show these). */
export const REPLY_MODES: { value: ReplyMode; label: string; help: string }[] = [
  { value: 'natural', label: 'Natural', help: 'A character you name answers; others speak up as talkative as their card says.' },
  { value: 'in-turn', label: 'In turn', help: 'One character answers each message, in list order.' },
  { value: 'choose', label: 'I choose', help: 'Nobody answers until you pick who replies.' },
  { value: 'everyone', label: 'Everyone', help: 'Every character answers each message, in list order.' },
];

export const CARD_MODES: { value: CardMode; label: string; help: string }[] = [
  { value: 'swap', label: 'Only the speaker', help: "Each reply is written knowing only the speaking character's card." },
  { value: 'join', label: 'Everyone’s descriptions', help: 'Each reply also knows the other characters’ descriptions.' },
];

export const groupPath = (id: string) => `/api/groups/${encodeURIComponent(id)}`;
