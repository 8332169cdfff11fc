import { spawn, type ChildProcess } from 'node:child_process';
import { track } from '../helpers/children.js';
import { join } from 'node:path';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.mjs');
export const ADMIN_TOKEN = 'faults-admin-token-0123456789abcdef';

/** A `gatehouse serve` child process, its log lines, and whether it is still running. */
export class Node {
  readonly lines: Record<string, unknown>[] = [];
  readonly exited: Promise<number | null>;
  exitCode: number | null | undefined;
  authUrl = '';
  botUrl = '';
  private readonly waiters: { test: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];

  constructor(readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => child.on('exit', (code) => {
      this.exitCode = code;
      resolve(code);
    }));
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const text = buf.slice(0, i);
        buf = buf.slice(i + 1);
        let line: Record<string, unknown>;
        try {
          line = JSON.parse(text) as Record<string, unknown>;
        } catch {
          line = { msg: text };
        }
        this.lines.push(line);
        for (const w of [...this.waiters]) {
          if (w.test(line)) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
  }

  get alive(): boolean {
    return this.exitCode === undefined;
  }

  /** Resolves with the first log line (past or future) whose message contains `text`; rejects if the process exits first. */
  logged(text: string, ms = 30_000): Promise<Record<string, unknown>> {
    const test = (l: Record<string, unknown>) => String(l.msg ?? '').includes(text);
    const seen = this.lines.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no "${text}" in the log within ${ms} ms:\n${this.dump()}`)), ms);
      this.waiters.push({ test, resolve: (l) => {
        clearTimeout(timer);
        resolve(l);
      } });
      this.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`gatehouse exited (${code}) before "${text}":\n${this.dump()}`));
      });
    });
  }

  async ready(ms = 30_000): Promise<this> {
    const line = await this.logged('Gatehouse ready', ms);
    this.authUrl = String(line.auth_url);
    this.botUrl = /chat-bot interface (\S+) /.exec(String(line.msg))?.[1] ?? '';
    return this;
  }

  dump(): string {
    return this.lines.slice(-40).map((l) => JSON.stringify(l)).join('\n');
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Starts `gatehouse serve`; await `.ready()` for its URLs. */
export function serve(env: Record<string, string>): Node {
  const child = track(spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...process.env, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'info',
      GATEHOUSE_ADMIN_TOKEN: ADMIN_TOKEN, GATEHOUSE_ROLES: 'auth', ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  return new Node(child);
}

export interface Outcome {
  status: number;
  ms: number;
  retryAfter: string | null;
  /** The body's error code (OAuth `error`, Bot API `error_code`), when there is one. */
  error?: unknown;
}

/** A request that counts a hang (no answer within `ms`) or a refused connection as status 0. */
export async function probe(url: string, init: RequestInit = {}, ms = 5000): Promise<Outcome> {
  const started = performance.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(ms) });
    const text = await res.text();
    let error: unknown;
    try {
      const body = JSON.parse(text) as { error?: unknown; error_code?: unknown };
      error = body.error ?? body.error_code;
    } catch {
      error = undefined;
    }
    return { status: res.status, ms: performance.now() - started, retryAfter: res.headers.get('retry-after'), error };
  } catch {
    return { status: 0, ms: performance.now() - started, retryAfter: null };
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Runs `request` back to back (`parallel` at a time) until `state.stop`,
 * recording every outcome with the time it was answered.
 */
export async function load(request: () => Promise<Outcome>, state: { stop: boolean }, parallel = 4): Promise<(Outcome & { at: number })[]> {
  const seen: (Outcome & { at: number })[] = [];
  const one = async () => {
    while (!state.stop) {
      const o = await request();
      seen.push({ ...o, at: performance.now() });
      if (o.status !== 200) await sleep(50);
    }
  };
  await Promise.all(Array.from({ length: parallel }, one));
  return seen;
}

/** Polls `request` until it answers `status`; returns the seconds it took. */
export async function secondsUntil(request: () => Promise<Outcome>, status: number, ms = 30_000): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < ms) {
    if ((await request()).status === status) return (performance.now() - started) / 1000;
    await sleep(100);
  }
  throw new Error(`no ${status} within ${ms} ms`);
}

/** Counts outcomes by status, e.g. { 200: 310, 503: 12 }. */
export function tally(outcomes: Outcome[]): Record<number, number> {
  const t: Record<number, number> = {};
  for (const o of outcomes) t[o.status] = (t[o.status] ?? 0) + 1;
  return t;
}
