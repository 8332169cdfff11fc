/** What the open-loop latency scenarios (wake-ups, button presses) share. */
import { request, type Agent } from 'node:http';
import type { Figures } from './load.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Answer {
  status: number;
  body: string;
}

/** One POST on `agent`'s connections; the status and body as they came. */
export function post(agent: Agent, url: string, headers: Record<string, string>, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function percentile(sorted: Float64Array, q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : 0;
}

/** Calls `fire` `rate` times a second for `seconds`, in 2 ms ticks (an open loop: a slow answer does not slow the load); how many it fired. */
export async function paced(rate: number, seconds: number, fire: () => void): Promise<number> {
  const start = performance.now();
  let sent = 0;
  for (;;) {
    const elapsed = (performance.now() - start) / 1000;
    if (elapsed >= seconds) return sent;
    const due = Math.floor(elapsed * rate) - sent;
    for (let i = 0; i < due; i++) fire();
    sent += Math.max(0, due);
    await sleep(2);
  }
}

/** A latency row: percentiles of what arrived, the rest counted as failed (non-2xx) or lost (errors). */
export function latencyFigures(latencies: number[], m: { duration: number; sent: number; failed: number; lost: number; cpuUs: number | undefined }): Figures {
  const sorted = Float64Array.from(latencies).sort();
  return {
    rps: latencies.length / m.duration,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    total: m.sent,
    non2xx: m.failed,
    errors: m.lost,
    cpuPerRequestUs: m.cpuUs === undefined || !latencies.length ? undefined : m.cpuUs / latencies.length,
    serverCpuShare: m.cpuUs === undefined ? undefined : m.cpuUs / (m.duration * 1e6),
  };
}
