import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

const ADMIN = 'admin-test-credential-0123456789abcdef';

describe('admin HTTP API', () => {
  let server: TestServer;
  const admin = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}/admin${path}`, {
      ...init,
      headers: { authorization: `Bearer ${ADMIN}`, ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    });
  const token = (id: string, secret: string) =>
    fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });

  before(async () => {
    server = await startServer({ env: { GATEHOUSE_ADMIN_TOKEN: ADMIN } });
  });
  after(() => server.close());

  it('refuses callers without the admin credential', async () => {
    const none = await fetch(`${server.url}/admin/clients`);
    assert.equal(none.status, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    const wrong = await fetch(`${server.url}/admin/clients`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
  });

  it('accepts the scheme in any case (RFC 7235 §2.1)', async () => {
    const res = await fetch(`${server.url}/admin/clients`, { headers: { authorization: `bearer ${ADMIN}` } });
    assert.equal(res.status, 200);
  });

  it('creates, lists, rotates the secret of and deletes a client', async () => {
    const res = await admin('/clients', { method: 'POST', body: JSON.stringify({ client_name: 'Batch job', grant_types: ['client_credentials'], scope: 'read' }) });
    assert.equal(res.status, 201);
    const created = (await res.json()) as { client_id: string; client_secret: string };
    assert.equal((await token(created.client_id, created.client_secret)).status, 200);

    const list = (await (await admin('/clients')).json()) as { clients: { client_id: string; client_secret?: string }[] };
    const listed = list.clients.find((c) => c.client_id === created.client_id);
    assert.ok(listed);
    assert.equal(listed.client_secret, undefined, 'secrets are never shown again');

    const rotated = (await (await admin(`/clients/${created.client_id}/secret`, { method: 'POST', body: '{}' })).json()) as { client_secret: string };
    assert.notEqual(rotated.client_secret, created.client_secret);
    assert.equal((await token(created.client_id, rotated.client_secret)).status, 200);
    // The previous secret keeps working during the grace period.
    assert.equal((await token(created.client_id, created.client_secret)).status, 200);

    assert.equal((await admin(`/clients/${created.client_id}`, { method: 'DELETE' })).status, 204);
    assert.equal((await admin(`/clients/${created.client_id}`)).status, 404);
    assert.equal((await token(created.client_id, rotated.client_secret)).status, 401);
  });

  it('answers bad registrations with invalid_request', async () => {
    for (const body of [
      '[]', '"x"', '{}',
      JSON.stringify({ client_name: 'X', redirect_uris: ['http://evil.example/cb'] }),
      JSON.stringify({ client_name: 'X', redirect_uris: 'https://a.example/cb', grant_types: 5 }),
      JSON.stringify({ client_name: 'X', redirect_uris: ['https://a.example/cb'], trusted: 'yes' }),
    ]) {
      const res = await admin('/clients', { method: 'POST', body });
      assert.equal(res.status, 400, body);
      assert.equal(((await res.json()) as { error: string }).error, 'invalid_request');
    }
    const broken = await admin('/clients', { method: 'POST', body: '{not json' });
    assert.equal(broken.status, 400);
  });

  it('creates users and rotates signing keys', async () => {
    const res = await admin('/users', { method: 'POST', body: JSON.stringify({ username: 'frank', email: 'frank@example.test', password: 'a long enough password' }) });
    assert.equal(res.status, 201);
    const dup = await admin('/users', { method: 'POST', body: JSON.stringify({ username: 'Frank', email: 'f2@example.test', password: 'a long enough password' }) });
    assert.equal(dup.status, 400);
    const before = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    const key = (await (await admin('/keys/rotate', { method: 'POST', body: '{}' })).json()) as { kid: string };
    const afterRotate = (await (await fetch(`${server.url}/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
    assert.ok(afterRotate.keys.some((k) => k.kid === key.kid));
    for (const k of before.keys) assert.ok(afterRotate.keys.some((x) => x.kid === k.kid), 'old key still published');
  });
});

describe('admin HTTP API without a configured credential', () => {
  it('is disabled', async () => {
    const server = await startServer();
    try {
      const res = await fetch(`${server.url}/admin/clients`, { headers: { authorization: 'Bearer anything' } });
      assert.equal(res.status, 401);
      assert.match(((await res.json()) as { error_description: string }).error_description, /disabled/);
    } finally {
      await server.close();
    }
  });
});
