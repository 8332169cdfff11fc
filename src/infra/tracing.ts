import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

/**
 * OpenTelemetry traces (README, Traces), on when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set: spans go over OTLP/HTTP (JSON) to `{endpoint}/v1/traces`, the
 * exporter reading the standard OTEL_EXPORTER_OTLP_* variables itself. One
 * provider per process, not registered globally, so a library's own spans
 * never leave by accident.
 */
let provider: BasicTracerProvider | undefined;
let tracer: Tracer | undefined;

export function startTracing(env: Record<string, string | undefined>): void {
  if (provider || !env.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const serviceVersion = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
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

const propagator = new W3CTraceContextPropagator();
const headerGetter = {
  keys: (h: Record<string, unknown>) => Object.keys(h),
  get: (h: Record<string, unknown>, key: string) => {
    const v = h[key];
    return typeof v === 'string' || Array.isArray(v) ? (v as string | string[]) : undefined;
  },
};

/** A server span for an incoming request, a child of the caller's `traceparent` when it sent one. */
export function startServerSpan(name: string, headers: Record<string, unknown>, attributes: Record<string, string | number>): Span | undefined {
  if (!tracer) return undefined;
  const parent: Context = propagator.extract(ROOT_CONTEXT, headers, headerGetter);
  return tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
}

export function endSpan(span: Span | undefined, status: number, attributes: Record<string, string | number> = {}): void {
  if (!span) return;
  span.setAttributes({ 'http.response.status_code': status, ...attributes });
  // OpenTelemetry HTTP semantic conventions: a server span is an error for 5xx only.
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
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
  if (!span) return next();
  current.run(trace.setSpan(ROOT_CONTEXT, span), next);
}

/** One SQL statement as a span (Kysely's log hook, src/store/db.ts): the statement without its values. */
export function traceQuery(event: { level: 'query' | 'error'; query: { sql: string }; queryDurationMillis: number }): void {
  if (!tracer) return;
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
  if (!tracer) return fn();
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
