import type { Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { endSpan, runInSpan, startServerSpan } from '../infra/tracing.js';
import { TOKEN_PATHS } from './auth/oauth-routes.js';
import { botLongPolls, botUpdatesDelivered, httpDuration, httpRequests, lockouts, signIns, tokensIssued } from '../infra/metrics.js';

export type ListenerName = 'auth' | 'api' | 'bot';

const TOKEN_ROUTES = new Set<string>(TOKEN_PATHS);

/** The password sign-in's answers (src/http/auth/login-routes.ts), by status. */
const SIGN_IN_OUTCOMES: Record<number, string> = { 303: 'success', 302: 'success', 401: 'failure', 429: 'locked', 403: 'refused', 400: 'invalid' };

/** The route pattern (`/:bot/:method`), never the URL: bounded labels, and no bot tokens in the metrics. */
const routeOf = (req: FastifyRequest) => req.routeOptions.url ?? 'unmatched';

const isGetUpdates = (listener: ListenerName, req: FastifyRequest) =>
  listener === 'bot' && String((req.params as { method?: unknown } | undefined)?.method ?? '').toLowerCase() === 'getupdates';

/**
 * Counts every answer of a listener for the Prometheus metrics
 * (src/infra/metrics.ts): requests and latency by route and status, and
 * what the answers say about tokens, sign-ins, throttles and the Bot API;
 * and traces each request when traces are on.
 */
export function instrumentHttp(app: FastifyInstance, listener: ListenerName): void {
  // OpenTelemetry server spans (src/infra/tracing.ts), when traces are on: named by the route pattern, never the URL.
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', (req, _reply, done) => {
    const span = startServerSpan(`${req.method} ${routeOf(req)}`, req.headers, { 'http.request.method': req.method, 'http.route': routeOf(req), 'gatehouse.listener': listener });
    if (span) spans.set(req, span);
    runInSpan(span, done);
  });
  // Again once the body is read: its stream's events ran outside the request's async context.
  app.addHook('preHandler', (req, _reply, done) => runInSpan(spans.get(req), done));
  app.addHook('onRequest', async (req, reply) => {
    if (!isGetUpdates(listener, req)) return;
    botLongPolls.inc();
    // 'close' comes once, whether the poll was answered or its client went away.
    reply.raw.once('close', () => botLongPolls.dec());
  });
  if (listener === 'bot') {
    app.addHook('onSend', async (req, reply, payload) => {
      if (reply.statusCode === 200 && typeof payload === 'string' && isGetUpdates(listener, req)) {
        try {
          const body = JSON.parse(payload) as { result?: unknown };
          if (Array.isArray(body.result) && body.result.length) botUpdatesDelivered.inc(body.result.length);
        } catch {
          // Not JSON: nothing was delivered.
        }
      }
      return payload;
    });
  }
  app.addHook('onResponse', async (req, reply) => {
    const route = routeOf(req);
    const status = reply.statusCode;
    const labels = { listener, method: req.method, route, status: String(status) };
    httpRequests.inc(labels);
    httpDuration.observe(labels, reply.elapsedTime / 1000);
    endSpan(spans.get(req), status);
    if (status === 429) lockouts.inc({ listener, route });
    if (listener !== 'auth') return;
    if (status === 200 && TOKEN_ROUTES.has(route)) {
      const grant = (req.method === 'GET' ? req.query : req.body) as { grant_type?: unknown } | undefined;
      // Only a grant the server accepted reaches here: the label's values are bounded by the supported grants.
      if (typeof grant?.grant_type === 'string') tokensIssued.inc({ grant_type: grant.grant_type });
    }
    if (route === '/login' && req.method === 'POST') signIns.inc({ outcome: SIGN_IN_OUTCOMES[status] ?? 'error' });
  });
}
