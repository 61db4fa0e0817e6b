import { encodeBase64Utf8, pngReplaceText } from '@yumina/world';
import sharp from 'sharp';

/**
 * A SillyTavern V3 card as the PNG SillyTavern writes: a real picture (noise, so it does not
 * compress: the file is about `bytes` long) with the card in a `ccv3` chunk and its V2 copy in a
 * `chara` chunk. `loreBytes` of lorebook text make the card itself large too.
 */
export async function cardPng(options: { bytes: number; name?: string; loreBytes?: number; width?: number }): Promise<Buffer> {
  const width = options.width ?? 1200;
  const loreBytes = options.loreBytes ?? 0;
  // The lorebook is written twice (ccv3 and chara), base64: about 2.7 bytes per byte of text.
  const pictureBytes = Math.max(width * 3 * 16, options.bytes - Math.round(loreBytes * 2.7));
  const height = Math.round(pictureBytes / (width * 3));
  const picture = await sharp({ create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 80 } } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  const entries = [];
  for (let index = 0, size = 0; size < loreBytes; index++) {
    const content = `The ${index}th lantern of the harbour burns with a green flame. `.repeat(40);
    size += content.length;
    entries.push({ keys: [`lantern ${index}`], content, enabled: true, insertion_order: index, extensions: {} });
  }
  const data = {
    name: options.name ?? 'Harbour Keeper',
    description: '{{char}} keeps the harbour lights.',
    personality: 'patient',
    scenario: 'A stormy night.',
    first_mes: 'The lamp swings. "Another ship?"',
    mes_example: '',
    creator_notes: '',
    system_prompt: '',
    post_history_instructions: '',
    alternate_greetings: [],
    tags: ['harbour'],
    creator: 'tests',
    character_version: '',
    extensions: {},
    character_book: { entries },
  };
  const v3 = JSON.stringify({ spec: 'chara_card_v3', spec_version: '3.0', data });
  const v2 = JSON.stringify({ spec: 'chara_card_v2', spec_version: '2.0', data });
  return Buffer.from(pngReplaceText(new Uint8Array(picture), { chara: encodeBase64Utf8(v2), ccv3: encodeBase64Utf8(v3) }));
}
