import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  path: string;
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  headers: Record<string, string>;
  body: string;
  /** webhook-timestamp, Unix seconds. */
  sentAt: number;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: string };

/**
 * A webhook receiver on loopback that checks every delivery with the
 * `standardwebhooks` library (the reference receiver code) and counts them,
 * keeping duplicates apart (the webhook-id is the idempotency key).
 */
export class Receiver {
  readonly all: Received[] = [];
  /** By path and webhook-id. */
  readonly unique = new Map<string, Received>();
  readonly invalid: string[] = [];
  /** How to answer; 200 by default. */
  answer: (r: Received) => Answer = () => ({ status: 200 });
  /**
   * With a controlled clock the timestamp is not "now", so the library's
   * tolerance check would refuse it: then the signature is recomputed with
   * the library's own `sign` for the sent timestamp and compared.
   */
  checkTimestamp = true;
  /** Holds every answer this long (so deliveries are in flight when a test kills the sender). */
  delayMs = 0;
  /** While set (hold()), answers wait for it as well as for delayMs. */
  private gate: Promise<void> | undefined;
  private server!: Server;
  private waiters: (() => void)[] = [];
  url = '';

  constructor(private readonly secrets: Map<string, string> = new Map()) {}

  /** The endpoint secret to verify deliveries to `path` with. */
  secretFor(path: string, secret: string): void {
    this.secrets.set(path, secret);
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const path = (req.url ?? '/').split('?')[0]!;
      const secret = this.secrets.get(path);
      let ok = false;
      if (secret) {
        const wh = new Webhook(secret);
        try {
          if (this.checkTimestamp) {
            wh.verify(body, headers);
          } else {
            const expected = wh.sign(headers['webhook-id']!, new Date(Number(headers['webhook-timestamp']) * 1000), body);
            if (!(headers['webhook-signature'] ?? '').split(' ').includes(expected)) throw new Error('signature mismatch');
          }
          ok = true;
        } catch (e) {
          this.invalid.push(`${path}: ${(e as Error).message}`);
        }
      } else {
        this.invalid.push(`${path}: no secret known`);
      }
      if (!ok) {
        res.writeHead(400).end('bad signature');
        return;
      }
      const parsed = JSON.parse(body) as { type: string; timestamp: string; data: Record<string, unknown> };
      const r: Received = { path, id: headers['webhook-id']!, ...parsed, headers, body, sentAt: Number(headers['webhook-timestamp']) };
      const a = this.answer(r);
      if (a.status >= 200 && a.status < 300) {
        this.all.push(r);
        // One endpoint's idempotency key (another endpoint gets the same id for the same event).
        const key = `${path} ${r.id}`;
        if (!this.unique.has(key)) this.unique.set(key, r);
      }
      const reply = () => {
        res.writeHead(a.status, a.headers ?? {}).end(a.body ?? 'ok');
        for (const w of this.waiters.splice(0)) w();
      };
      const answer = () => (this.delayMs ? setTimeout(reply, this.delayMs) : reply());
      if (this.gate) void this.gate.then(answer);
      else answer();
    });
  }

  /**
   * Answers nothing until the returned function is called (arrivals are still
   * counted): a sender's deliveries stay in flight for as long as a test needs,
   * whatever the machine's load.
   */
  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.gate = undefined;
      release();
    };
  }

  types(): Set<string> {
    return new Set([...this.unique.values()].map((r) => r.type));
  }

  /** Waits (polling on each delivery) until `done()` holds or `ms` passes. */
  async until(done: () => boolean, ms = 20_000): Promise<boolean> {
    const end = Date.now() + ms;
    while (!done()) {
      const left = end - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return true;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export const ADMIN_TOKEN = 'test-admin-token-with-enough-entropy-0123456789';

/** Calls the admin API. */
export async function admin(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${base}/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
