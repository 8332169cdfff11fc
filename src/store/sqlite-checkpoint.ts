import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** SQLite's own default: a checkpoint once the write-ahead log holds this many pages. */
const DEFAULT_AUTOCHECKPOINT = 1000;
/**
 * With the checkpointer running, the request thread still checkpoints past this
 * many pages (64 MB at 4 KB): a checkpoint that runs beside continuous writes
 * never finds every frame copied, and the log restarts only after one that does.
 */
const FALLBACK_AUTOCHECKPOINT = 16_000;
/** How often the checkpointer copies what the log holds (a no-op when nothing was written). */
const EVERY_MS = 50;
/** The log size at which the checkpointer starts (a server that writes little never needs it). */
const START_AT_BYTES = 1 << 20;
const WATCH_MS = 1000;

/**
 * A connection of its own on a worker thread: PASSIVE checkpoints (copying
 * the log into the database file, never waiting for a lock) every EVERY_MS.
 * CommonJS text, since an eval'd worker has `require` and no loader of ours.
 */
const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy: another checkpoint is running; the next tick copies */ }
}, workerData.everyMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); process.exit(0); });
parentPort.postMessage('ready');
`;

/**
 * Checkpoints of a SQLite database in write-ahead-log mode, off the request
 * thread. By default SQLite checkpoints inside the commit that pushed the log
 * past 1000 pages: better-sqlite3 is synchronous, so that commit (two fsyncs
 * with synchronous=NORMAL) held the event loop for 5–10 ms every few hundred
 * writes, the tail of every request then in flight. Once the log first passes
 * START_AT_BYTES a worker thread copies it every EVERY_MS instead; the request
 * thread's own checkpoint stays as a bound (FALLBACK_AUTOCHECKPOINT), and comes
 * back at SQLite's default if the worker cannot start or stops. Durability is
 * unchanged: commits go to the log exactly as before.
 */
export function offThreadCheckpoints(sqlite: SQLite.Database, path: string): () => Promise<void> {
  let worker: Worker | undefined;
  let closed = false;
  const watch = setInterval(() => {
    stat(`${path}-wal`).then((s) => {
      if (!closed && !worker && s.size >= START_AT_BYTES) start();
    }, () => undefined);
  }, WATCH_MS);
  watch.unref();

  const start = () => {
    clearInterval(watch);
    const w = new Worker(WORKER, { eval: true, workerData: { path, driver: createRequire(import.meta.url).resolve('better-sqlite3'), everyMs: EVERY_MS } });
    worker = w;
    w.unref();
    w.once('message', () => {
      if (!closed && sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
    });
    const back = () => {
      if (worker === w) worker = undefined;
      if (!closed && sqlite.open) sqlite.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT}`);
    };
    w.once('error', back);
    w.once('exit', back);
  };

  return async () => {
    closed = true;
    clearInterval(watch);
    const w = worker;
    if (!w) return;
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage('close');
    const timer = setTimeout(() => void w.terminate(), 2000);
    await exited;
    clearTimeout(timer);
  };
}
