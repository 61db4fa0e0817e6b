import { type FakeOpenAi, startFakeOpenAi } from '../tests/support/fake-openai.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The provider of bench/turn.bench.ts, in a process of its own (a provider is another machine): the
 * loopback OpenAI-compatible fake streaming REPLY in CHUNKS chunks, usage 900/300. Announces its URL
 * (`ready`, with CHUNKS), answers `cpu` with its process.cpuUsage(), `reset` by forgetting recorded requests
 * (keeps its memory flat), `last-prompt` with the messages the server last sent, and `stop` by closing.
 */
const REPLY = Array.from({ length: 60 }, (_, i) => `The corridor narrows again, step ${i}; ash drifts.`).join(' ') + ' [gold: +1]';
const CHUNKS = 100;

let provider: FakeOpenAi | undefined;

await serveParent(
  async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    provider.setHandler(() => ({ kind: 'completion', content: REPLY, chunks: CHUNKS, usage: { prompt_tokens: 900, completion_tokens: 300 } }));
    return { url: provider.url, chunks: CHUNKS };
  },
  {
    cpu: () => process.cpuUsage(),
    reset: () => void provider?.reset(),
    // the messages of the newest completion a server path asked for (the bench's direct calls are marked)
    'last-prompt': () => provider?.completions.findLast((r) => !r.headers['x-bench-direct'])?.body?.messages ?? null,
  },
  async () => {
    await provider?.close();
  },
);
