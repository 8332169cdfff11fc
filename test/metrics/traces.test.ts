import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startServer, type TestServer } from '../helpers/server.js';
import { createEndpoint } from '../../src/core/notify/endpoints.js';

interface OtlpSpan { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: { key: string; value: Record<string, unknown> }[] }
interface OtlpExport { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] }

const read = (req: IncomingMessage) => new Promise<string>((resolve) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => resolve(body));
});

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v && (v.stringValue ?? v.intValue);
};

describe('OpenTelemetry traces (OTEL_EXPORTER_OTLP_ENDPOINT), exported to a local OTLP/HTTP receiver', () => {
  const exports: { path: string; contentType: string; body: OtlpExport }[] = [];
  // The OTLP receiver: the JSON encoding of OTLP/HTTP (opentelemetry-proto, ExportTraceServiceRequest).
  const collector = createServer(async (req, res) => {
    const body = await read(req);
    exports.push({ path: req.url ?? '', contentType: req.headers['content-type'] ?? '', body: JSON.parse(body) as OtlpExport });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  let hooks = 0;
  const receiver = createServer(async (req, res) => {
    await read(req);
    hooks++;
    res.writeHead(204).end();
  });
  let server: TestServer | undefined;

  before(async () => {
    await Promise.all([collector, receiver].map((s) => new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve))));
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
  });
  after(async () => {
    await server?.close();
    collector.close();
    receiver.close();
  });

  it('spans for HTTP requests (child of the caller\'s traceparent, named by route), their SQL statements and outbound deliveries', async () => {
    server = await startServer({ env: { GATEHOUSE_ALLOW_PRIVATE_WEBHOOKS: 'true' } });
    const { gh } = server;
    await createEndpoint(gh.storage.events, gh.clock, { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['*'] }, { checkUrl: gh.outbound.registered.check });
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    assert.equal((await fetch(`${server.authUrl}/healthz`, { headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })).status, 200);
    const job = await server.createClient({ name: 'Job', grantTypes: ['client_credentials'], redirectUris: [], scope: 'read' });
    const token = await fetch(`${server.authUrl}/oauth/token?x=secret-in-url`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${job.id}:${job.secret}`).toString('base64')}` },
      body: 'grant_type=client_credentials',
    });
    assert.equal(token.status, 200);
    // token.issued goes out as a webhook: a client span.
    for (let i = 0; i < 100 && hooks === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(hooks > 0, 'the webhook was delivered');
    await server.close();
    server = undefined;

    assert.ok(exports.length > 0, 'spans were exported');
    assert.ok(exports.every((e) => e.path === '/v1/traces' && e.contentType.startsWith('application/json')));
    const resource = exports[0]!.body.resourceSpans[0]!.resource.attributes;
    assert.equal(resource.find((a) => a.key === 'service.name')?.value.stringValue, 'gatehouse');
    const spans = exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
    const health = spans.find((s) => s.name === 'GET /healthz' && s.traceId === traceId);
    assert.ok(health, `a span continuing the caller's trace: ${spans.map((s) => s.name).join(', ')}`);
    assert.equal(health.parentSpanId, '00f067aa0ba902b7');
    assert.equal(health.kind, 2); // SPAN_KIND_SERVER
    assert.equal(Number(attr(health, 'http.response.status_code')), 200);
    const tokenSpan = spans.find((s) => s.name === 'POST /oauth/token');
    assert.ok(tokenSpan);
    assert.equal(attr(tokenSpan, 'gatehouse.listener'), 'auth');
    // Its SQL statements are its children: a POST's handler runs after the body was read, in the request's context.
    const statements = spans.filter((s) => s.traceId === tokenSpan.traceId && s.parentSpanId === tokenSpan.spanId && attr(s, 'db.operation.name'));
    assert.ok(statements.length > 0, `database spans under the token request: ${spans.map((s) => s.name).join(', ')}`);
    assert.ok(statements.every((s) => s.kind === 3), statements.map((s) => s.name).join(', '));
    assert.ok(statements.some((s) => s.name === 'SELECT clients' && /^select .* from "clients"/i.test(String(attr(s, 'db.query.text')))), statements.map((s) => s.name).join(', '));
    assert.ok(!JSON.stringify(spans).includes(job.secret!), 'no values in the statements');
    const delivery = spans.find((s) => s.name === 'POST webhook');
    assert.ok(delivery, 'a client span for the delivery');
    assert.equal(delivery.kind, 3); // SPAN_KIND_CLIENT
    assert.equal(attr(delivery, 'server.address'), '127.0.0.1');
    assert.ok(!JSON.stringify(spans).includes('secret-in-url'), 'no URL in the spans');
  });
});
