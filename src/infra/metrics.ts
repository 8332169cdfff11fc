import { createServer, type Server } from 'node:http';
import { listenOn } from './listen.js';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Gatehouse's Prometheus metrics (docs/operations.md, Metrics). One registry per
 * process: the HTTP hooks (src/http/metrics.ts) and the notification worker
 * record into it whether or not a listener serves it, which costs a few
 * map lookups a request. The protocol core never sees prom-client: what it
 * does is read off the HTTP answers and the worker's transport.
 */
export const registry = new Registry();

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const httpRequests = new Counter({
  name: 'gatehouse_http_requests_total',
  help: 'HTTP requests answered, by listener (auth, api, bot), method, route pattern and status',
  labelNames: ['listener', 'method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new Histogram({
  name: 'gatehouse_http_request_duration_seconds',
  help: 'Time to answer an HTTP request, by listener, method, route pattern and status',
  labelNames: ['listener', 'method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

export const tokensIssued = new Counter({
  name: 'gatehouse_tokens_issued_total',
  help: 'Successful token endpoint answers, by grant type',
  labelNames: ['grant_type'] as const,
  registers: [registry],
});

export const signIns = new Counter({
  name: 'gatehouse_sign_ins_total',
  help: 'Password sign-ins by outcome: success, failure (wrong credentials), locked (throttled), refused (account locked or expired form), invalid',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const lockouts = new Counter({
  name: 'gatehouse_throttled_total',
  help: 'Requests refused with 429 by a throttle (sign-in lockouts, client secret guessing, Bot API flood control), by listener and route',
  labelNames: ['listener', 'route'] as const,
  registers: [registry],
});

export const webhookDeliverySeconds = new Histogram({
  name: 'gatehouse_webhook_delivery_duration_seconds',
  help: 'Time of one webhook or chat-notification delivery attempt, by transport (webhook, chat) and outcome (ok, failed)',
  labelNames: ['transport', 'outcome'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** Set by the process that can count its outbox (src/server.ts); read at each scrape. */
let backlogSource: (() => Promise<number>) | undefined;
export function countWebhookBacklogWith(source: (() => Promise<number>) | undefined): void {
  backlogSource = source;
}

new Gauge({
  name: 'gatehouse_webhook_backlog',
  help: 'Webhook and chat-notification deliveries pending (queued or waiting for a retry)',
  registers: [registry],
  async collect() {
    if (!backlogSource) return;
    try {
      this.set(await backlogSource());
    } catch {
      // A scrape during a database outage leaves the last value.
    }
  },
});

export const botUpdatesDelivered = new Counter({
  name: 'gatehouse_bot_updates_delivered_total',
  help: 'Bot API updates returned by getUpdates',
  registers: [registry],
});

export const botLongPolls = new Gauge({
  name: 'gatehouse_bot_long_polls',
  help: 'Bot API getUpdates requests in flight (long polls waiting for updates)',
  registers: [registry],
});

let defaultsCollected = false;

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

function collectDefaults(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: registry });
}

/** In a worker of a `serve` (GATEHOUSE_WORKERS): answer the primary's scrapes with this process's registry. */
export function joinClusterMetrics(): void {
  collectDefaults();
  AggregatorRegistry.setRegistries([registry]);
  // prom-client starts answering the primary's requests when an AggregatorRegistry is first made.
  new AggregatorRegistry();
}

/** What a metrics listener serves: this process's registry, or the sum over a `serve`'s workers. */
export interface MetricsSource {
  metrics(): Promise<string>;
  readonly contentType: string;
}

/** In a `serve`'s primary: every worker's metrics, summed per series (prom-client asks them over the cluster's IPC). */
export function clusterMetricsSource(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return { metrics: () => aggregator.clusterMetrics(), contentType: aggregator.contentType };
}

/** `GET /metrics` on its own port (GATEHOUSE_METRICS_PORT), with the process metrics. */
export async function startMetricsListener(host: string, port: number, source: MetricsSource = registry): Promise<MetricsListener> {
  if (source === registry) collectDefaults();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(path === '/metrics' ? 405 : 404, { 'content-type': 'text/plain; charset=utf-8', ...(path === '/metrics' ? { allow: 'GET, HEAD' } : {}) });
      res.end(path === '/metrics' ? 'method not allowed\n' : 'not found: the metrics are at /metrics\n');
      return;
    }
    source.metrics().then((text) => {
      res.writeHead(200, { 'content-type': source.contentType, 'cache-control': 'no-store' });
      res.end(req.method === 'HEAD' ? undefined : text);
    }, (err: Error) => {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`metrics failed: ${err.message}\n`);
    });
  });
  const { address } = await listenOn(server, host, port, 'http');
  return {
    url: address,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
    }),
  };
}
