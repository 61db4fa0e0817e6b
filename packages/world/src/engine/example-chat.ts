/**
 * Parses example-section entry content into user/assistant pairs. Blocks are separated by
 * `<START>`; within a block a line beginning `{{user}}:` (or the player's name, `user:`) starts a
 * user message and `{{char}}:` (or the character's name, `char:`, `assistant:`) an assistant
 * message; other lines continue the current message. Text before any speaker line belongs to
 * the assistant.
 */
export interface ExampleMessage {
  role: 'user' | 'assistant';
  content: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Parsed example chats by content and names (a world's examples are parsed once, not every turn); cleared past 1,000. */
const parsed = new Map<string, readonly (readonly ExampleMessage[])[]>();

export function parseExampleChat(content: string, charName: string, userName: string): readonly (readonly ExampleMessage[])[] {
  const key = `${charName}\u0000${userName}\u0000${content}`;
  let blocks = parsed.get(key);
  if (!blocks) {
    blocks = parseExampleChatText(content, charName, userName);
    if (parsed.size >= 1_000) parsed.clear();
    parsed.set(key, blocks);
  }
  return blocks;
}

function parseExampleChatText(content: string, charName: string, userName: string): ExampleMessage[][] {
  const userLabels = ['\\{\\{user\\}\\}', 'user', escapeRegExp(userName)].filter((label) => label !== '');
  const charLabels = ['\\{\\{char\\}\\}', 'char', 'assistant', escapeRegExp(charName)].filter((label) => label !== '');
  const userLine = new RegExp(`^\\s*(?:${userLabels.join('|')})\\s*:\\s?`, 'i');
  const charLine = new RegExp(`^\\s*(?:${charLabels.join('|')})\\s*:\\s?`, 'i');
  const blocks: ExampleMessage[][] = [];
  for (const block of content.split(/<START>/i)) {
    const messages: ExampleMessage[] = [];
    for (const line of block.split('\n')) {
      const user = userLine.exec(line);
      const char = user ? null : charLine.exec(line);
      if (user) messages.push({ role: 'user', content: line.slice(user[0].length) });
      else if (char) messages.push({ role: 'assistant', content: line.slice(char[0].length) });
      else if (messages.length > 0) (messages[messages.length - 1] as ExampleMessage).content += `\n${line}`;
      else if (line.trim() !== '') messages.push({ role: 'assistant', content: line });
    }
    const trimmed = messages.map((message) => ({ role: message.role, content: message.content.trim() })).filter((message) => message.content !== '');
    if (trimmed.length > 0) blocks.push(trimmed);
  }
  return blocks;
}
