import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig, type Plugin } from 'vite';
import { HOST_PAGE_POLICY } from '../packages/sandbox/src/host-policy.ts';

/** The app shell (index.html) carries the host page's Content-Security-Policy as a meta element too (the static site in production). */
function hostPagePolicy(): Plugin {
  return {
    name: 'yumina-host-page-policy',
    transformIndexHtml: {
      order: 'pre',
      handler: (html, ctx) =>
        ctx.filename.endsWith('/index.html') ? html.replace('<meta charset="UTF-8" />', `<meta charset="UTF-8" />\n    <meta http-equiv="Content-Security-Policy" content="${HOST_PAGE_POLICY}" />`) : html,
    },
  };
}

export default defineConfig({
  plugins: [react(), hostPagePolicy()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    rollupOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        landing: fileURLToPath(new URL('landing.html', import.meta.url)),
        partnerDemo: fileURLToPath(new URL('partner-demo.html', import.meta.url)),
      },
    },
  },
  server: { proxy: { '/api': 'http://localhost:3000', '/health': 'http://localhost:3000' } },
});
