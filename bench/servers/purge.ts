import { openStorage } from '../../src/store/index.js';
import type { SqlTokenStore } from '../../src/store/tokens.js';

/**
 * `purge.ts DATABASE_URL`: runs Gatehouse's own purge of expired tokens
 * (src/store/tokens.ts purgeExpired, bounded batches) once, in a process of
 * its own beside the server under load, and prints how long it took and the
 * longest stall of its event loop: on SQLite, whose statements run
 * synchronously, that is the longest single batch statement, which is what
 * a server running the purge itself would stand still for. It prints
 * `{"ready":true}` once the database is open and starts on a line on stdin,
 * so its start-up does not fall into the measured seconds.
 */
const storage = await openStorage(process.argv[2]!);
process.stdout.write('{"ready":true}\n');
await new Promise((resolve) => process.stdin.once('data', resolve));
// A 1 ms ticker: the longest gap between its ticks is the longest the event loop stood still.
let last = performance.now();
let maxGap = 0;
const ticker = setInterval(() => {
  const now = performance.now();
  maxGap = Math.max(maxGap, now - last);
  last = now;
}, 1);
await new Promise((resolve) => setTimeout(resolve, 20));
const t0 = performance.now();
// An optional second argument sets the batch size (src/store/purge.ts PURGE_BATCH otherwise).
const batch = process.argv[3] ? Number(process.argv[3]) : undefined;
const deleted = await (storage.tokens as SqlTokenStore).purgeExpired(Date.now(), batch);
const ms = performance.now() - t0;
await new Promise((resolve) => setTimeout(resolve, 20));
clearInterval(ticker);
process.stdout.write(`${JSON.stringify({ deleted, ms, maxStallMs: maxGap })}\n`);
await storage.close();
process.exit(0);
