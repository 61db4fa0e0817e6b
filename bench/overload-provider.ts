import { type FakeOpenAi, startFakeOpenAi } from '../tests/support/fake-openai.ts';
import { serveParent } from './turn-ipc.ts';

/**
 * The provider of bench/overload.bench.ts, in a process of its own (a provider is another
 * machine): the loopback OpenAI-compatible fake answering a short reply in 4 chunks. Announces its
 * URL (`ready`); `reset` forgets recorded requests.
 */
let provider: FakeOpenAi | undefined;

await serveParent(
  async () => {
    provider = await startFakeOpenAi({ apiKey: null });
    provider.setHandler(() => ({ kind: 'completion', content: 'The torch flares; the corridor ahead is empty.', chunks: 4, usage: { prompt_tokens: 900, completion_tokens: 12 } }));
    return { url: provider.url };
  },
  { reset: () => void provider?.reset() },
  async () => {
    await provider?.close();
  },
);
