import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openStorage } from '../../src/store/index.js';

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
const stalls = monitorEventLoopDelay({ resolution: 1 });
stalls.enable();
const t0 = performance.now();
const deleted = await storage.tokens.purgeExpired(Date.now());
const ms = performance.now() - t0;
stalls.disable();
process.stdout.write(`${JSON.stringify({ deleted, ms, maxStallMs: stalls.max / 1e6 })}\n`);
await storage.close();
process.exit(0);
