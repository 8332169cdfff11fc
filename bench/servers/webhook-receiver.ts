import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exitWithParent } from './lifecycle.js';

/**
 * The webhook receiver of the bench: answers 204 at once and records, per
 * delivery, the delay from the event's `timestamp` (when Gatehouse committed
 * it, millisecond precision) to its arrival here. Duplicates (the same
 * `webhook-id` again, at-least-once delivery) are counted apart.
 * `GET /stats` reports, `POST /reset` starts over.
 */
let delays: number[] = [];
let seen = new Set<string>();
let duplicates = 0;
let first = 0;
let last = 0;

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/stats') {
    const sorted = Float64Array.from(delays).sort();
    const at = (q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ count: delays.length, duplicates, first, last, p50: at(0.5), p99: at(0.99) }));
    return;
  }
  if (req.method === 'POST' && req.url === '/reset') {
    delays = [];
    seen = new Set();
    duplicates = first = last = 0;
    res.writeHead(204).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    res.writeHead(204).end();
    const id = String(req.headers['webhook-id']);
    if (seen.has(id)) {
      duplicates++;
      return;
    }
    seen.add(id);
    const { timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
    delays.push(now - Date.parse(timestamp));
    if (!first) first = now;
    last = now;
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
exitWithParent();
