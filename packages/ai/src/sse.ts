import { AiInvalidResponseError } from './errors.ts';

export interface SseLimits {
  /** The whole body may be at most this many bytes. */
  maxBytes?: number;
  /** One event (or one line still without its end) may be at most this many characters. */
  maxEventBytes?: number;
}

const LINE_END = /\r\n|\r|\n/g;

/**
 * A text/event-stream parser fed one network read at a time: `push` returns the `data` of every
 * event the read completed (multi-line data joined with "\n"), `end` the last one of a body that
 * closes without a blank line. Comment lines (": keep-alive") and other fields are skipped. Beyond
 * a limit the body is refused (AiInvalidResponseError), so a hostile provider cannot make the
 * reader hold an unbounded buffer.
 */
export class SseParser {
  private readonly maxBytes: number;
  private readonly maxEvent: number;
  private readonly decoder = new TextDecoder();
  private received = 0;
  private eventSize = 0;
  private buffer = '';
  private data: string[] = [];

  constructor(limits: SseLimits = {}) {
    this.maxBytes = limits.maxBytes ?? Number.POSITIVE_INFINITY;
    this.maxEvent = limits.maxEventBytes ?? Number.POSITIVE_INFINITY;
  }

  push(chunk: Uint8Array): string[] {
    this.received += chunk.byteLength;
    if (this.received > this.maxBytes) throw new AiInvalidResponseError('The AI provider sent a stream larger than the limit.');
    const buffer = this.buffer + this.decoder.decode(chunk, { stream: true });
    if (buffer.length > this.maxEvent) throw new AiInvalidResponseError('The AI provider sent an event larger than the limit.');
    const events: string[] = [];
    let start = 0;
    LINE_END.lastIndex = 0;
    for (let match = LINE_END.exec(buffer); match; match = LINE_END.exec(buffer)) {
      // a CR at the very end may be the first half of a CRLF split across reads
      if (match[0] === '\r' && match.index === buffer.length - 1) break;
      this.line(buffer.slice(start, match.index), events);
      start = match.index + match[0].length;
    }
    this.buffer = start ? buffer.slice(start) : buffer;
    return events;
  }

  end(): string[] {
    const buffer = this.buffer + this.decoder.decode();
    this.buffer = '';
    const events: string[] = [];
    if (buffer.startsWith('data:')) this.data.push(buffer.slice(buffer.startsWith('data: ') ? 6 : 5));
    if (this.data.length) events.push(this.data.join('\n'));
    this.data = [];
    return events;
  }

  private line(line: string, events: string[]): void {
    if (line === '') {
      if (this.data.length) events.push(this.data.length === 1 ? this.data[0]! : this.data.join('\n'));
      this.data = [];
      this.eventSize = 0;
    } else if (line.startsWith('data:')) {
      this.eventSize += line.length;
      if (this.eventSize > this.maxEvent) throw new AiInvalidResponseError('The AI provider sent an event larger than the limit.');
      this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
}

/** Reads a text/event-stream body and yields the `data` of each event (see SseParser). */
export async function* readServerSentEvents(body: ReadableStream<Uint8Array>, limits: SseLimits = {}): AsyncGenerator<string, void, void> {
  const parser = new SseParser(limits);
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      yield* parser.push(value);
    }
    yield* parser.end();
  } finally {
    reader.cancel().catch(() => {});
  }
}
