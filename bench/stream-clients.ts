/**
 * The client side of bench/streams.bench.ts, in a process of its own so that the server's memory
 * is measured alone: opens `count` live update overviews (server-sent events) on a URL, reports
 * when all are ready, then on `arm` reports how long until every one received a `record` event.
 */
import { Agent, request } from 'node:http';

interface Start {
  type: 'start';
  url: string;
  count: number;
}

const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
let armedAt = 0;
let awaiting = 0;
let received = 0;
const streams: { gotRecord: boolean }[] = [];

function open(url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const state = { gotRecord: false };
    const req = request(url, { agent, headers: { accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      let ready = false;
      res.on('data', (chunk: string) => {
        buffer += chunk;
        if (!ready && buffer.includes('event: ready')) {
          ready = true;
          streams.push(state);
          resolve();
        }
        if (armedAt && !state.gotRecord && buffer.includes('event: record')) {
          state.gotRecord = true;
          received++;
          if (received === awaiting) process.send?.({ type: 'received', count: received, ms: performance.now() - armedAt });
        }
        if (buffer.length > 4096) buffer = buffer.slice(-2048);
      });
    });
    req.on('error', reject);
    req.end();
  });
}

process.on('message', async (message: Start | { type: 'arm' } | { type: 'stop' }) => {
  if (message.type === 'start') {
    try {
      for (let i = 0; i < message.count; i += 250) {
        await Promise.all(Array.from({ length: Math.min(250, message.count - i) }, () => open(message.url)));
      }
      process.send?.({ type: 'ready', count: streams.length });
    } catch (err) {
      process.send?.({ type: 'error', message: (err as Error).message });
    }
  } else if (message.type === 'arm') {
    awaiting = streams.length;
    received = 0;
    armedAt = performance.now();
    process.send?.({ type: 'armed' });
  } else {
    process.exit(0);
  }
});
