/**
 * Builds the frame document: a Content-Security-Policy (meta) that admits exactly the two inline
 * scripts by hash, no network (connect-src 'none'), no eval, and images/fonts/media only from the
 * platform's asset origin; the boot data as JSON; the utility CSS; the runtime; the world's modules.
 */
import type { Boot } from './frame/bridge.ts';
import { scriptSafe } from './compile.ts';

export interface FrameDocumentInput {
  runtime: string;
  modules: string;
  css: string;
  boot: Boot;
  assetOrigin: string;
}

async function sha256(text: string): Promise<string> {
  if (!globalThis.crypto?.subtle) throw new Error('The custom interface needs a secure context (HTTPS or localhost).');
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  let binary = '';
  for (const byte of new Uint8Array(digest)) binary += String.fromCharCode(byte);
  return `'sha256-${btoa(binary)}'`;
}

/** The frame's policy. `scriptHashes` are CSP source expressions ('sha256-…'). */
export function framePolicy(scriptHashes: string[], assetOrigin: string): string {
  const assets = new URL(assetOrigin).origin;
  return [
    "default-src 'none'",
    `script-src ${scriptHashes.join(' ')}`,
    "style-src 'unsafe-inline'",
    `img-src ${assets} data: blob:`,
    `font-src ${assets} data:`,
    `media-src ${assets} blob:`,
    "connect-src 'none'",
    "frame-src 'none'",
    "child-src 'none'",
    "worker-src 'none'",
    "object-src 'none'",
    "manifest-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');
}

const BASE_CSS = `html,body,#root{height:100%;margin:0}body{font-family:system-ui,sans-serif;background:#0c0a09;color:#f5f5f4}
.yumina-chat{display:flex;flex-direction:column;min-height:0}.yumina-messages{flex:1 1 auto;min-height:0;overflow-y:auto}.yumina-input{flex:none}
[data-yumina="turn-error"]{margin:0 0 0 auto;max-width:85%;border:1px solid #ef4444;border-radius:.75rem;padding:.5rem .75rem;font-size:.875rem}
[data-yumina="turn-error"] button{color:inherit;background:none;border:0;padding:0;text-decoration:underline;cursor:pointer}
.yumina-bubble{padding:.5rem .75rem;border-radius:.75rem;background:#1c1917}.yumina-bubble-user{margin-left:auto;background:#292524}
.yumina-input textarea{min-height:2.5rem;background:#1c1917;color:inherit;border:1px solid #44403c;border-radius:.5rem;padding:.5rem}
.yumina-input button{padding:0 1rem;border-radius:.5rem;background:#065f46;color:#fff}
[data-yumina="composer-actions"] button[type="submit"]{flex:1 1 auto;min-height:2.5rem}[data-yumina="composer-actions"] button[type="button"]{flex:1 1 0;padding:.1rem .4rem;background:#292524;border-radius:.35rem}
.yumina-input button:disabled{opacity:.5}
.yumina-model-picker{background:rgb(0 0 0/.5);z-index:50}.yumina-model-picker-panel{background:#1c1917;padding:1rem;border-radius:.75rem;max-height:80vh;overflow:auto;min-width:16rem}
.yumina-model-picker ul{list-style:none;padding:0;margin:.25rem 0}.yumina-model-picker button{color:inherit;background:#292524;border:0;border-radius:.4rem;padding:.25rem .5rem}`;

export async function buildFrameDocument(input: FrameDocumentInput): Promise<string> {
  const runtime = scriptSafe(input.runtime);
  const modules = input.modules;
  const policy = framePolicy([await sha256(runtime), await sha256(modules)], input.assetOrigin);
  const boot = JSON.stringify(input.boot).replace(/</g, '\\u003c');
  const css = `${BASE_CSS}\n${input.css}`.replace(/<\/(style)/gi, '<\\/$1');
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${policy.replace(/"/g, '&quot;')}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<style>${css}</style>`,
    '</head><body><div id="root"></div>',
    `<script type="application/json" id="yumina-boot">${boot}</script>`,
    `<script>${runtime}</script>`,
    `<script>${modules}</script>`,
    '</body></html>',
  ].join('\n');
}
