import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown.ts';

describe('chat Markdown', () => {
  it('renders emphasis, code, lists and paragraphs', () => {
    expect(renderMarkdown('*x* and **y** and `z`')).toBe('<p><em>x</em> and <strong>y</strong> and <code>z</code></p>');
    expect(renderMarkdown('- one\n- two')).toBe('<ul><li>one</li><li>two</li></ul>');
    expect(renderMarkdown('1. one\n2. two')).toBe('<ol><li>one</li><li>two</li></ol>');
    expect(renderMarkdown('a\nb\n\nc')).toBe('<p>a<br>b</p><p>c</p>');
    expect(renderMarkdown('```\nconst a = *b*;\n```')).toBe('<pre><code>const a = *b*;</code></pre>');
  });

  it('escapes every tag and attribute of the source', () => {
    const html = renderMarkdown('<img src=x onerror="alert(1)"> <script>alert(1)</script> *ok*');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<script');
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(html).toContain('<em>ok</em>');
  });

  it('keeps images only where the resolver gives a URL (the world’s own assets)', () => {
    const image = (ref: string) => (ref.startsWith('asset://') ? `https://host/a/${ref.slice(8)}?x=1&y=2` : null);
    expect(renderMarkdown('![map](asset://m1)', { image })).toBe('<p><img class="message-image" src="https://host/a/m1?x=1&amp;y=2" alt="map" data-asset-ref="asset://m1"></p>');
    expect(renderMarkdown('![x](https://evil.example/t.png)', { image })).toBe('<p>x</p>');
    expect(renderMarkdown('![x](asset://m1)')).toBe('<p>x</p>');
    // A crafted reference cannot break out of the attribute.
    expect(renderMarkdown('![a"b](asset://m"1)', { image })).not.toMatch(/src="[^"]*"[^>]*"1/);
  });
});
