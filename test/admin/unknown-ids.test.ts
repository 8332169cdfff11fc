import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'admin-test-credential-0123456789abcdef';

/**
 * Every admin route that names a client, a webhook endpoint or a delivery
 * answers an unknown one the same way: 404 with `{error: "not_found",
 * error_description}` (src/http/errors.ts, adminAnswer). Before one error
 * type, rotating the secret of an unknown client answered 400 invalid_request.
 */
describe('admin API: an unknown id is 404 on every route', () => {
  let server: TestServer;
  let endpointId: string;
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
    const res = await admin('POST', '/webhooks', { url: 'https://hooks.example.test/x', events: '*' });
    assert.equal(res.status, 201, await res.clone().text());
    endpointId = ((await res.json()) as { id: string }).id;
  });
  after(() => server.close());

  const unknown = 'no-such-id';
  const routes: [method: string, path: () => string, body?: unknown][] = [
    ['GET', () => `/clients/${unknown}`],
    ['DELETE', () => `/clients/${unknown}`],
    ['POST', () => `/clients/${unknown}/secret`, {}],
    ['GET', () => `/webhooks/${unknown}`],
    ['DELETE', () => `/webhooks/${unknown}`],
    ['POST', () => `/webhooks/${unknown}/enable`, {}],
    ['POST', () => `/webhooks/${unknown}/disable`, {}],
    ['POST', () => `/webhooks/${unknown}/secret`, {}],
    ['GET', () => `/webhooks/${unknown}/messages`],
    ['GET', () => `/webhooks/${unknown}/messages/${unknown}`],
    ['POST', () => `/webhooks/${unknown}/messages/${unknown}/resend`, {}],
    ['POST', () => `/webhooks/${unknown}/replay`, { since: 0 }],
    // A known endpoint, an unknown delivery.
    ['GET', () => `/webhooks/${endpointId}/messages/${unknown}`],
    ['POST', () => `/webhooks/${endpointId}/messages/${unknown}/resend`, {}],
  ];

  for (const [method, path, body] of routes) {
    it(`${method} ${path().replace(/undefined/, ':endpoint')}`, async () => {
      const res = await admin(method, path(), body);
      assert.equal(res.status, 404);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const json = (await res.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(json).sort(), ['error', 'error_description']);
      assert.equal(json.error, 'not_found');
      assert.match(String(json.error_description), /^unknown (client|webhook endpoint|message)$/);
    });
  }
});
