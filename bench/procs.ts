import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/**
 * Child processes of the bench. Every server under test runs in a process of
 * its own, so it never shares an event loop with autocannon; all of them are
 * stopped by `stopAll`, which run.ts calls on success, on error and on SIGINT.
 */

export interface Child {
  name: string;
  proc: ChildProcess;
  /** Last lines the child printed, shown when it fails. */
  tail: string[];
}

const children = new Set<Child>();
const cleanups: (() => Promise<void>)[] = [];

const TAIL_LINES = 30;

/**
 * Starts `node args…` and resolves with what `ready` extracts from the first
 * stdout line it accepts (the bare servers print `{"url":…}`, Gatehouse its
 * pino start line with `auth_url`).
 */
export function startChild<T>(
  name: string,
  args: string[],
  ready: (line: string) => T | undefined,
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ child: Child; value: T }> {
  const proc = spawn(process.execPath, args, { env: opts.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const child: Child = { name, proc, tail: [] };
  children.add(child);
  proc.on('exit', () => children.delete(child));
  const keep = (line: string) => {
    child.tail.push(line);
    if (child.tail.length > TAIL_LINES) child.tail.shift();
  };
  createInterface({ input: proc.stderr! }).on('line', keep);
  const out = createInterface({ input: proc.stdout! });

  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(new Error(`${name}: ${why}\n${child.tail.map((l) => `  | ${l}`).join('\n')}`));
    };
    const timer = setTimeout(() => fail('did not report ready in time'), opts.timeoutMs ?? 30_000);
    proc.on('error', (e) => fail(e.message));
    proc.on('exit', (code, signal) => fail(`exited before it was ready (code ${code}, signal ${signal})`));
    out.on('line', (line) => {
      keep(line);
      if (settled) return;
      const value = ready(line);
      if (value === undefined) return;
      settled = true;
      clearTimeout(timer);
      resolve({ child, value });
    });
  });
}

/** Parses a JSON log line and returns `field` when it is a string. */
export function jsonField(line: string, field: string): string | undefined {
  try {
    const v = (JSON.parse(line) as Record<string, unknown>)[field];
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export function stopChild(child: Child, graceMs = 5_000): Promise<void> {
  const { proc } = child;
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => proc.kill('SIGKILL'), graceMs);
    proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    proc.kill('SIGTERM');
  });
}

/** Registers work for `stopAll` (dropping a PostgreSQL schema, removing a temp dir). */
export function onCleanup(fn: () => Promise<void>): void {
  cleanups.push(fn);
}

let stopping: Promise<void> | undefined;

/** Stops every child still running, then runs the cleanups in reverse order. Idempotent. */
export function stopAll(): Promise<void> {
  stopping ??= (async () => {
    await Promise.all([...children].map((c) => stopChild(c)));
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (e) {
        console.error(`bench: cleanup failed: ${(e as Error).message}`);
      }
    }
  })();
  return stopping;
}
