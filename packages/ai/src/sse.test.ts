import { describe, expect, it } from 'vitest';
import { AiInvalidResponseError } from './errors.ts';
import { SseParser } from './sse.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('SseParser (one network read at a time)', () => {
  it('returns every event a read completes, keeps a partial line for the next read, and joins multi-line data', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: one\n\ndata: two\n\n: keep-alive\n\nda'))).toEqual(['one', 'two']);
    expect(parser.push(bytes('ta: thr'))).toEqual([]);
    expect(parser.push(bytes('ee\nevent: x\ndata:four\n\n'))).toEqual(['three\nfour']);
    expect(parser.push(bytes('data: tail'))).toEqual([]);
    expect(parser.end()).toEqual(['tail']);
  });

  it('handles CRLF and CR line ends, a CRLF split across reads, and a character split across reads', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: a\r\n\r'))).toEqual([]); // the CR may be half a CRLF
    expect(parser.push(bytes('\ndata: b\r\rdata: é'.slice(0, -1)))).toEqual(['a', 'b']);
    const e = bytes('é\n\n');
    expect(parser.push(e.subarray(0, 1))).toEqual([]);
    expect(parser.push(e.subarray(1))).toEqual(['é']);
  });

  it('refuses a body or an event beyond its limit', () => {
    expect(() => new SseParser({ maxBytes: 10 }).push(bytes('data: 0123456789\n\n'))).toThrow(AiInvalidResponseError);
    const parser = new SseParser({ maxEventBytes: 12 });
    expect(parser.push(bytes('data: 12345\n'))).toEqual([]);
    expect(() => parser.push(bytes('data: 67890\n'))).toThrow(AiInvalidResponseError);
    expect(() => new SseParser({ maxEventBytes: 8 }).push(bytes('data: no line end yet'))).toThrow(AiInvalidResponseError);
  });
});
