import { describe, expect, it } from 'vitest';
import { chatHtml } from './DefaultChat.tsx';

const scope = { origin: 'https://play.example', worldId: 'wld_1', token: null };

describe('chat text in the default chat', () => {
  it("renders the current world's asset images through resolveAssetUrl; other images stay text", () => {
    const html = chatHtml('A map: ![the map](asset://ast_AAAAAAAAAAAAAAAAAAAAAA) and ![x](https://tracker.example/p.gif)', scope);
    expect(html).toContain('<img class="message-image" src="https://play.example/api/worlds/wld_1/assets/ast_AAAAAAAAAAAAAAAAAAAAAA" alt="the map"');
    expect(html).not.toContain('tracker.example/p.gif"');
    expect(html).toContain(' and x</p>');
  });
  it('without an asset scope yet, images wait (alt text only)', () => {
    expect(chatHtml('![the map](asset://ast_AAAAAAAAAAAAAAAAAAAAAA)', null)).toBe('<p>the map</p>');
  });
});
