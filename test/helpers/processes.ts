/**
 * Gatehouse as separate processes (`gatehouse serve` children) sharing one
 * database or one Redis, and raw HTTP requests from chosen loopback source
 * addresses, for tests of state that must hold across processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { request, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { track } from './children.js';

const BIN = join(import.meta.dirname, '../../bin/gatehouse.mjs');

export interface Node {
  child: ChildProcess;
  /** {auth_url}; the other URLs are in `ready`. */
  url: string;
  /** The "Gatehouse ready" log line: auth_url, api_url, bot_api_url. */
  ready: { auth_url: string; api_url: string; bot_api_url: string };
  exited: Promise<number | null>;
  stop(): Promise<void>;
  /** What it logged so far (stdout then stderr), for a failure message. */
  log(): string;
}

/** `gatehouse serve` in a child process; resolves once it logged that it is ready. */
export function serveProcess(env: Record<string, string>): Promise<Node> {
  const child = track(spawn(process.execPath, [BIN, 'serve'], {
    env: { ...process.env, GATEHOUSE_AUTH_PORT: '0', GATEHOUSE_API_PORT: '0', GATEHOUSE_BOT_PORT: '0', GATEHOUSE_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    let found = false;
    child.stdout!.on('data', (d) => {
      out += d;
      // Once ready, only collect: scanning the whole output again on every chunk is quadratic in a long (trace) log.
      if (found) return;
      const ready = out.split('\n').find((l) => l.includes('Gatehouse ready'));
      if (!ready) return;
      found = true;
      const line = JSON.parse(ready) as Node['ready'];
      resolve({ child, url: line.auth_url, ready: line, exited, stop, log: () => `${out}\n${err}` });
    });
    void exited.then((code) => reject(new Error(`gatehouse exited (${code}) before it was ready:\n${out}\n${err}`)));
  });
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request on a connection of its own from `from` (any 127.0.0.0/8
 * address is loopback on Linux), so a test can play many clients at once.
 */
export function sendFrom(
  from: string,
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; form?: Record<string, string> } = {},
): Promise<RawResponse> {
  const url = new URL(path, base);
  const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
  const headers = { ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname + url.search, method: opts.method ?? (body !== undefined ? 'POST' : 'GET'), headers, localAddress: from, agent: false },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A distinct loopback source address per index (127.1.x.y). */
export const loopback = (i: number, net = 1) => `127.${net}.${Math.floor(i / 250)}.${(i % 250) + 1}`;
