import { describe, expect, it } from 'vitest';
import { splitAssetImages } from './MessageText.tsx';

const id = 'ast_AbCdEfGhIjKlMnOpQrSt_-';

describe('asset images in a message', () => {
  it('turns only exact asset references into images and leaves everything else as text', () => {
    expect(splitAssetImages(`Look: ![the map](asset://${id}) here.`)).toEqual(['Look: ', { alt: 'the map', ref: `asset://${id}` }, ' here.']);
    for (const text of ['![x](https://evil.example/pixel.png)', '![x](asset://../x)', '![x](asset://a/b)', `![x](asset://${id}%2F..)`, 'no images', '']) {
      expect(splitAssetImages(text).join(''), text).toBe(text);
    }
    expect(splitAssetImages(`![a](asset://${id})![b](/x.png)`)).toEqual([{ alt: 'a', ref: `asset://${id}` }, '![b](/x.png)']);
  });
});
