// bench/turn.bench.ts only: a copy of packages/ai/src/sse.ts as it was before issue 24's second round (see bench/legacy/turn-route.ts).
import { AiInvalidResponseError } from '../../../packages/ai/src/errors.ts';

export interface SseLimits {
  /** The whole body may be at most this many bytes. */
  maxBytes?: number;
  /** One event (or one line still without its end) may be at most this many characters. */
  maxEventBytes?: number;
}

/**
 * Reads a text/event-stream body and yields the `data` of each event (multi-line data joined with
 * "\n"). Comment lines (": keep-alive") and other fields are skipped. Beyond a limit the body is
 * refused (AiInvalidResponseError), so a hostile provider cannot make the reader hold an unbounded buffer.
 */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>, limits: SseLimits = {}): AsyncGenerator<string, void, void> {
  const maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
  const maxEvent = limits.maxEventBytes ?? Number.POSITIVE_INFINITY;
  let received = 0;
  let eventSize = 0;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        buffer += decoder.decode();
        break;
      }
      received += value.byteLength;
      if (received > maxBytes) throw new AiInvalidResponseError('The AI provider sent a stream larger than the limit.');
      buffer += decoder.decode(value, { stream: true });
      if (buffer.length > maxEvent) throw new AiInvalidResponseError('The AI provider sent an event larger than the limit.');
      let newline = buffer.search(/\r\n|\r|\n/);
      while (newline >= 0) {
        // a CR at the very end may be the first half of a CRLF split across reads
        if (newline === buffer.length - 1 && buffer.endsWith('\r')) break;
        const line = buffer.slice(0, newline);
        const width = buffer.startsWith('\r\n', newline) ? 2 : 1;
        buffer = buffer.slice(newline + width);
        if (line === '') {
          if (data.length) yield data.join('\n');
          data = [];
          eventSize = 0;
        } else if (line.startsWith('data:')) {
          eventSize += line.length;
          if (eventSize > maxEvent) throw new AiInvalidResponseError('The AI provider sent an event larger than the limit.');
          data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
        }
        newline = buffer.search(/\r\n|\r|\n/);
      }
    }
    if (buffer.startsWith('data:')) data.push(buffer.slice(buffer.startsWith('data: ') ? 6 : 5));
    if (data.length) yield data.join('\n');
  } finally {
    reader.cancel().catch(() => {});
  }
}
