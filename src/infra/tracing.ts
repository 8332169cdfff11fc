import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import type { Context, Span, TextMapPropagator, Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';

/**
 * OpenTelemetry traces (docs/operations.md, Traces), on when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set: spans go over OTLP/HTTP (JSON) to `{endpoint}/v1/traces`, the
 * exporter reading the standard OTEL_EXPORTER_OTLP_* variables itself. One
 * provider per process, not registered globally, so a library's own spans
 * never leave by accident. The OpenTelemetry packages are loaded only then:
 * they are a fifth of the modules a start would otherwise load, and most
 * servers run without an endpoint.
 */
let provider: BasicTracerProvider | undefined;
let tracer: Tracer | undefined;
let otel: typeof import('@opentelemetry/api') | undefined;
let propagator: TextMapPropagator | undefined;

export async function startTracing(env: Record<string, string | undefined>): Promise<void> {
  if (provider || !env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const [api, { W3CTraceContextPropagator }, { OTLPTraceExporter }, { resourceFromAttributes }, { BasicTracerProvider, BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/api'), import('@opentelemetry/core'), import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'), import('@opentelemetry/sdk-trace-base'),
  ]);
  if (provider) return;
  const serviceVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  otel = api;
  propagator = new W3CTraceContextPropagator();
  provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': env.OTEL_SERVICE_NAME || 'gatehouse', 'service.version': serviceVersion }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter(), { scheduledDelayMillis: 1000 })],
  });
  tracer = provider.getTracer('gatehouse', serviceVersion);
}

/** Sends the spans still buffered (at shutdown, and for tests). */
export async function flushTraces(): Promise<void> {
  await provider?.forceFlush();
}

const headerGetter = {
  keys: (h: Record<string, unknown>) => Object.keys(h),
  get: (h: Record<string, unknown>, key: string) => {
    const v = h[key];
    return typeof v === 'string' || Array.isArray(v) ? (v as string | string[]) : undefined;
  },
};

/** A server span for an incoming request, a child of the caller's `traceparent` when it sent one. */
export function startServerSpan(name: string, headers: Record<string, unknown>, attributes: Record<string, string | number>): Span | undefined {
  if (!tracer || !otel || !propagator) return undefined;
  const parent: Context = propagator.extract(otel.ROOT_CONTEXT, headers, headerGetter);
  return tracer.startSpan(name, { kind: otel.SpanKind.SERVER, attributes }, parent);
}

export function endSpan(span: Span | undefined, status: number, attributes?: Record<string, string | number>): void {
  if (!span || !otel) return;
  span.setAttribute('http.response.status_code', status);
  if (attributes) span.setAttributes(attributes);
  // OpenTelemetry HTTP semantic conventions: a server span is an error for 5xx only.
  if (status >= 500) span.setStatus({ code: otel.SpanStatusCode.ERROR });
  span.end();
}

/**
 * The span of the request being handled, carried through its async work
 * (our own AsyncLocalStorage rather than a global context manager), so the
 * database spans of a request are its children.
 */
const current = new AsyncLocalStorage<Context>();

/** Runs the rest of a request's handling (`next`) with `span` as the current span. */
export function runInSpan(span: Span | undefined, next: () => void): void {
  if (!span || !otel) return next();
  current.run(otel.trace.setSpan(otel.ROOT_CONTEXT, span), next);
}

/** One SQL statement as a span (Kysely's log hook, src/store/db.ts): the statement without its values. */
export function traceQuery(event: { level: 'query' | 'error'; query: { sql: string }; queryDurationMillis: number }): void {
  if (!tracer || !otel) return;
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT } = otel;
  const end = Date.now();
  const operation = /^\s*(\w+)/.exec(event.query.sql)?.[1]?.toUpperCase() ?? 'QUERY';
  const table = /\b(?:from|into|update)\s+"?([\w.]+)"?/i.exec(event.query.sql)?.[1];
  const span = tracer.startSpan(table ? `${operation} ${table}` : operation, {
    kind: SpanKind.CLIENT,
    startTime: end - event.queryDurationMillis,
    attributes: { 'db.operation.name': operation, 'db.query.text': event.query.sql.slice(0, 2000), ...(table ? { 'db.collection.name': table } : {}) },
  }, current.getStore() ?? ROOT_CONTEXT);
  if (event.level === 'error') span.setStatus({ code: SpanStatusCode.ERROR });
  span.end(end);
}

/** A client span around an outbound call (webhook and chat deliveries). */
export async function inClientSpan<T>(name: string, attributes: Record<string, string | number>, fn: () => Promise<T>, statusOf: (r: T) => number | null): Promise<T> {
  if (!tracer || !otel) return fn();
  const { SpanKind, SpanStatusCode, ROOT_CONTEXT } = otel;
  // Work a request set off (the delivery of an event it recorded) stays in that request's trace.
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, current.getStore() ?? ROOT_CONTEXT);
  try {
    const r = await fn();
    const status = statusOf(r);
    if (status !== null) span.setAttribute('http.response.status_code', status);
    if (status === null || status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
    return r;
  } catch (e) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error).message });
    throw e;
  } finally {
    span.end();
  }
}

/** Whether traces are on (storage adds its query hook only then). */
export const tracingOn = (): boolean => tracer !== undefined;
