// Demo game front-end: runs its WASM engine and talks to the platform's save API.
const base = new URL('.', import.meta.url);
const game = 'demo';
const $ = (id) => document.getElementById(id);

async function boot() {
  const { instance } = await WebAssembly.instantiateStreaming(fetch(new URL('add.8d41b6c3.wasm', base)));
  $('result').textContent = String(instance.exports.add(2, 3));
  $('engine').textContent = '(WASM engine ready)';
  document.body.dataset.engine = 'ready';
}

async function session() {
  const res = await fetch('/api/auth/session', { credentials: 'same-origin' });
  return res.ok ? (await res.json()).account : null;
}

async function save(mode, board) {
  const current = await fetch(`/api/games/${game}/saves/${mode}`, { credentials: 'same-origin' });
  const revision = current.ok ? (await current.json()).revision : 0;
  const res = await fetch(`/api/games/${game}/saves/${mode}`, {
    method: 'PUT',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ revision, save: { format: 'yumina-save', version: 1, chunks: [{ id: 1, data: btoa(JSON.stringify(board)) }] } }),
  });
  $('status').textContent = res.ok ? `Saved ${mode} (revision ${(await res.json()).revision}).` : `Save failed (${res.status}).`;
}

$('versus').addEventListener('click', () => save('versus', { wave: 1 }));
$('adventure').addEventListener('click', async () => {
  const account = await session();
  if (!account) {
    // A known signed-in player skips this; others sign in in a separate tab, this tab keeps its state.
    $('login-explainer').hidden = false;
    $('login-link').href = `/login?returnTo=${encodeURIComponent('/app/settings')}`;
    return;
  }
  $('login-explainer').hidden = true;
  await save('adventure', { level: 1 });
});
window.addEventListener('focus', async () => {
  if (!$('login-explainer').hidden && (await session())) $('login-explainer').hidden = true;
});

boot().catch((err) => {
  $('engine').textContent = `engine failed: ${err.message}`;
  document.body.dataset.engine = 'failed';
});
