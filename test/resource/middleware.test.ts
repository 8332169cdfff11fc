import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import formbody from '@fastify/formbody';
// Through the package's "exports" entry, as another service would import it.
import { gatehouseFastify, gatehouseMiddleware, type GuardedRequest } from 'gatehouse/middleware';
import { createClient } from '../../src/core/admin.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { TestClock } from '../helpers/clock.js';
import { assertBearerError, seed } from './support.js';

/** Another service protecting its routes with Gatehouse tokens: once with Fastify, once with plain Node. */
describe('bearer middleware (gatehouse/middleware)', () => {
  const clock = new TestClock();
  let server: TestServer;
  let s: Awaited<ReturnType<typeof seed>>;
  let fastifyApp: FastifyInstance;
  let nodeServer: Server;
  let fastifyUrl: string;
  let nodeUrl: string;
  let jwksFetches = 0;

  before(async () => {
    server = await startServer({ clock });
    s = await seed(server);
    const { client, secret } = await createClient(server.gh.storage, clock, { name: 'Notes API', redirectUris: [], grantTypes: ['client_credentials'], introspect: true });
    // The real fetch, counted: how often the middleware goes to the JWKS.
    const countingFetch: typeof fetch = (input, init) => {
      if (String(input).endsWith('/.well-known/jwks.json')) jwksFetches++;
      return fetch(input, init);
    };
    const options = {
      issuer: server.url, audience: server.apiUrl, clock, fetch: countingFetch,
      introspection: { clientId: client.id, clientSecret: secret!, cacheTtlSec: 0 },
    };

    fastifyApp = Fastify();
    await fastifyApp.register(formbody);
    fastifyApp.get('/public', async () => ({ ok: true }));
    await fastifyApp.register(async (api) => {
      await api.register(gatehouseFastify, options);
      api.get('/notes', { config: { auth: { scope: 'chat' } } }, async (req) => ({ owner: req.auth!.subject, via: req.auth!.via }));
      api.post('/notes', { config: { auth: { scope: ['chat', 'email'] } } }, async (req) => ({ body: req.body }));
      api.get('/anyone', async (req) => ({ scope: req.auth!.scope }));
      api.get('/health', { config: { auth: false } }, async () => ({ ok: true }));
    });
    fastifyUrl = await fastifyApp.listen({ host: '127.0.0.1', port: 0 });

    const requireToken = gatehouseMiddleware(options);
    const notes = requireToken('chat');
    nodeServer = createServer((req: GuardedRequest, res) => notes(req, res, () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ owner: req.auth!.subject, body: req.body ?? null }));
    }));
    await new Promise<void>((r) => nodeServer.listen(0, '127.0.0.1', r));
    nodeUrl = `http://127.0.0.1:${(nodeServer.address() as AddressInfo).port}`;
  });
  after(async () => {
    await fastifyApp.close();
    nodeServer.closeAllConnections();
    await new Promise((r) => nodeServer.close(r));
    await server.close();
  });

  const call = async (url: string, init: RequestInit = {}) => {
    const res = await fetch(url, init);
    return { status: res.status, challenge: res.headers.get('www-authenticate'), body: (await res.json()) as Record<string, unknown>, headers: res.headers };
  };

  it('Fastify: per-route scopes, public routes, request.auth', async () => {
    const token = await s.token('chat user');
    const bearer = { authorization: `Bearer ${token}` };
    assert.deepEqual((await call(`${fastifyUrl}/notes`, { headers: bearer })).body, { owner: s.user.id, via: 'jwt' });
    assert.equal((await call(`${fastifyUrl}/public`)).status, 200);
    assert.equal((await call(`${fastifyUrl}/health`)).status, 200);
    assert.deepEqual((await call(`${fastifyUrl}/anyone`, { headers: bearer })).body, { scope: ['chat', 'user'] });
    const missing = await call(`${fastifyUrl}/notes`);
    assert.equal(missing.status, 401);
    // RFC 9449 §7.1: the DPoP challenge beside it names the proof algorithms.
    assert.equal(missing.challenge, 'Bearer realm="gatehouse", DPoP algs="ES256 RS256 PS256 EdDSA Ed25519"');
    const denied = await call(`${fastifyUrl}/notes`, { method: 'POST', headers: bearer });
    assertBearerError(denied, 403, 'insufficient_scope');
    assert.match(denied.challenge!, /scope="chat email"/);
  });

  it('Fastify: form-body token, and more than one method refused', async () => {
    const token = await s.token('chat email');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const ok = await call(`${fastifyUrl}/notes`, { method: 'POST', headers: form, body: new URLSearchParams({ access_token: token, text: 'hi' }) });
    assert.equal(ok.status, 200);
    assertBearerError(await call(`${fastifyUrl}/notes?access_token=${token}`, { headers: { authorization: `Bearer ${token}` } }), 400, 'invalid_request');
  });

  it('plain Node: header, query and form body; the body stays readable for the handler', async () => {
    const token = await s.token('chat');
    assert.equal((await call(nodeUrl, { headers: { authorization: `Bearer ${token}` } })).status, 200);
    assert.equal((await call(`${nodeUrl}/?access_token=${token}`)).status, 200);
    // Prototype names in the query are parameters like any other (issue 24, finding 9).
    assert.equal((await call(`${nodeUrl}/?__proto__=x&constructor=y&toString=z&access_token=${token}`)).status, 200);
    assert.equal((await call(`${nodeUrl}/?constructor=x&hasOwnProperty=y`)).status, 401, 'no token: RFC 6750 §3.1 401');
    const posted = await call(nodeUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ access_token: token, text: 'hello' }) });
    assert.deepEqual(posted.body, { owner: s.user.id, body: { access_token: token, text: 'hello' } });
    assertBearerError(await call(`${nodeUrl}/?access_token=${token}`, { headers: { authorization: `Bearer ${token}` } }), 400, 'invalid_request');
    assertBearerError(await call(nodeUrl, { headers: { authorization: `Bearer ${await s.token('user')}` } }), 403, 'insufficient_scope');
    assertBearerError(await call(nodeUrl, { headers: { authorization: 'Bearer not-a-token' } }), 401, 'invalid_token');
  });

  it('rejects tokens for another audience, and opaque tokens go to introspection', async () => {
    const other = gatehouseMiddleware({ issuer: server.url, audience: 'https://other-api.example', clock })('chat');
    const srv = createServer((req, res) => other(req, res, () => res.end('{}')));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
      const a = await call(url, { headers: { authorization: `Bearer ${await s.token('chat')}` } });
      assertBearerError(a, 401, 'invalid_token');
      assert.match(a.challenge!, /audience/);
    } finally {
      srv.closeAllConnections();
      await new Promise((r) => srv.close(r));
    }
    const opaque = await seed(server, { tokenFormat: 'opaque', username: 'bob' });
    const token = await opaque.token('chat');
    assert.equal((await call(`${fastifyUrl}/notes`, { headers: { authorization: `Bearer ${token}` } })).body.via, 'introspection');
    await opaque.revoke(token);
    // cacheTtlSec: 0, so the revocation is seen at once.
    assertBearerError(await call(`${fastifyUrl}/notes`, { headers: { authorization: `Bearer ${token}` } }), 401, 'invalid_token');
  });

  it('refreshes the JWKS once for an unknown kid, and not for every made-up one', async () => {
    await call(`${fastifyUrl}/notes`, { headers: { authorization: `Bearer ${await s.token('chat')}` } });
    const before = jwksFetches;
    await server.gh.keys.rotate(clock.now() + 3600_000);
    const fresh = await s.token('chat');
    // The clock has not moved since the first fetch: inside the cooldown the new kid is not fetched yet…
    assertBearerError(await call(`${fastifyUrl}/notes`, { headers: { authorization: `Bearer ${fresh}` } }), 401, 'invalid_token');
    assert.equal(jwksFetches, before);
    // …and that refusal is not remembered: after the cooldown one refresh finds the key.
    clock.advance(2000);
    assert.equal((await call(`${fastifyUrl}/notes`, { headers: { authorization: `Bearer ${fresh}` } })).status, 200);
    assert.equal(jwksFetches, before + 1);
    // A burst of tokens naming unknown keys right after: no further fetches inside the cooldown.
    const [, p, sig] = fresh.split('.');
    for (let i = 0; i < 5; i++) {
      const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'at+jwt', kid: `made-up-${i}` })).toString('base64url');
      assertBearerError(await call(`${fastifyUrl}/notes`, { headers: { authorization: `Bearer ${header}.${p}.${sig}` } }), 401, 'invalid_token');
    }
    assert.equal(jwksFetches, before + 1);
  });
});
