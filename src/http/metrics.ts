import type { Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { endSpan, runInSpan, startServerSpan, tracingOn } from '../infra/tracing.js';
import { TOKEN_PATHS } from './auth/oauth-routes.js';

export type ListenerName = 'auth' | 'api' | 'bot';

const TOKEN_ROUTES = new Set<string>(TOKEN_PATHS);

/** The password sign-in's answers (src/http/auth/login-routes.ts), by status. */
const SIGN_IN_OUTCOMES: Record<number, string> = { 303: 'success', 302: 'success', 401: 'failure', 429: 'locked', 403: 'refused', 400: 'invalid' };

/** The route pattern (`/:bot/:method`), never the URL: bounded labels, and no bot tokens in the metrics. */
const routeOf = (req: FastifyRequest) => req.routeOptions.url ?? 'unmatched';

const isGetUpdates = (listener: ListenerName, req: FastifyRequest) =>
  listener === 'bot' && String((req.params as { method?: unknown } | undefined)?.method ?? '').toLowerCase() === 'getupdates';

type Metrics = typeof import('../infra/metrics.js');
let metrics: Metrics | undefined;

/**
 * Turns the counting on (startGatehouse, when GATEHOUSE_METRICS_PORT is set),
 * before the apps are built. Without a metrics port nobody can read the
 * counters, so they are neither loaded (prom-client) nor kept per request.
 */
export async function enableHttpMetrics(): Promise<void> {
  metrics ??= await import('../infra/metrics.js');
}

/**
 * Counts every answer of a listener for the Prometheus metrics
 * (src/infra/metrics.ts) when they are on: requests and latency by route and
 * status, and what the answers say about tokens, sign-ins, throttles and the
 * Bot API; and traces each request when traces are on (both are decided
 * before the apps are built: src/server.ts).
 */
export function instrumentHttp(app: FastifyInstance, listener: ListenerName): void {
  if (tracingOn()) traceHttp(app, listener);
  if (metrics) countHttp(app, listener, metrics);
}

/** OpenTelemetry server spans (src/infra/tracing.ts): named by the route pattern, never the URL. */
function traceHttp(app: FastifyInstance, listener: ListenerName): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', (req, _reply, done) => {
    const span = startServerSpan(`${req.method} ${routeOf(req)}`, req.headers, { 'http.request.method': req.method, 'http.route': routeOf(req), 'gatehouse.listener': listener });
    if (span) spans.set(req, span);
    runInSpan(span, done);
  });
  // Again once the body is read: its stream's events ran outside the request's async context.
  app.addHook('preHandler', (req, _reply, done) => runInSpan(spans.get(req), done));
  app.addHook('onResponse', (req, reply, done) => {
    endSpan(spans.get(req), reply.statusCode);
    done();
  });
}

/** The label children of one series (prom-client `labels()`), made once and kept: no label object per request. */
interface Series {
  requests: { inc(): void };
  duration: { observe(seconds: number): void };
}

/**
 * One listener's series by route pattern, method and status. Bounded as the
 * metric itself is (routes × methods × statuses), so they are kept for the
 * life of the process, as prom-client keeps the series.
 */
function seriesOf(m: Metrics, listener: ListenerName) {
  const byRoute = new Map<string, Map<string, Map<number, Series>>>();
  return (route: string, method: string, status: number): Series => {
    let byMethod = byRoute.get(route);
    if (!byMethod) byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      const labels = { listener, method, route, status: String(status) };
      byStatus.set(status, (series = { requests: m.httpRequests.labels(labels), duration: m.httpDuration.labels(labels) }));
    }
    return series;
  };
}

/** A child per label value (`grant_type`, `outcome`, `route`): values bounded by the server's own answers. */
function childrenOf<C>(make: (value: string) => C): (value: string) => C {
  const made = new Map<string, C>();
  return (value) => {
    let child = made.get(value);
    if (!child) made.set(value, (child = make(value)));
    return child;
  };
}

/** Hooks in callback style: an async hook costs a promise and its microtasks on every request. */
function countHttp(app: FastifyInstance, listener: ListenerName, m: Metrics): void {
  const { botLongPolls, botUpdatesDelivered, lockouts, signIns, tokensIssued } = m;
  const series = seriesOf(m, listener);
  const throttled = childrenOf((route) => lockouts.labels({ listener, route }));
  const issued = childrenOf((grant_type) => tokensIssued.labels({ grant_type }));
  const signedIn = childrenOf((outcome) => signIns.labels({ outcome }));
  if (listener === 'bot') {
    // Long polls are the bot listener's only: the other listeners do not run this hook at all.
    const endPoll = () => botLongPolls.dec();
    app.addHook('onRequest', (req, reply, done) => {
      if (isGetUpdates(listener, req)) {
        botLongPolls.inc();
        // 'close' comes once, whether the poll was answered or its client went away.
        reply.raw.once('close', endPoll);
      }
      done();
    });
    app.addHook('onSend', (req, reply, payload, done) => {
      if (reply.statusCode === 200 && typeof payload === 'string' && isGetUpdates(listener, req)) {
        try {
          const body = JSON.parse(payload) as { result?: unknown };
          if (Array.isArray(body.result) && body.result.length) botUpdatesDelivered.inc(body.result.length);
        } catch {
          // Not JSON: nothing was delivered.
        }
      }
      done(null, payload);
    });
  }
  app.addHook('onResponse', (req, reply, done) => {
    const route = routeOf(req);
    const status = reply.statusCode;
    const s = series(route, req.method, status);
    s.requests.inc();
    s.duration.observe(reply.elapsedTime / 1000);
    if (status === 429) throttled(route).inc();
    if (listener === 'auth') {
      if (status === 200 && TOKEN_ROUTES.has(route)) {
        const grant = (req.method === 'GET' ? req.query : req.body) as { grant_type?: unknown } | undefined;
        // Only a grant the server accepted reaches here: the label's values are bounded by the supported grants.
        if (typeof grant?.grant_type === 'string') issued(grant.grant_type).inc();
      }
      if (route === '/login' && req.method === 'POST') signedIn(SIGN_IN_OUTCOMES[status] ?? 'error').inc();
    }
    done();
  });
}
