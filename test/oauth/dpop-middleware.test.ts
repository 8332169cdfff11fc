import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import * as oidc from 'openid-client';
// Through the package's "exports" entry, as another service would import it.
import { gatehouseFastify, gatehouseMiddleware, type GuardedRequest } from 'gatehouse/middleware';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { ath, dpopKey, proof, type DpopKey } from './dpop-support.js';

/** `gatehouse/middleware` on another service's API: DPoP proofs, server nonces (RFC 9449 §9), Fastify and plain Node. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`DPoP in gatehouse/middleware (${kind})`, { skip }, () => {
    let server: TestServer;
    let app: FastifyInstance;
    let node: Server;
    let fastifyUrl: string;
    let nodeUrl: string;
    let introspected: Server;
    let introspectedUrl: string;
    let key: DpopKey;
    let token: string;
    let config: oidc.Configuration;
    before(async () => {
      server = await startServer({ db: kind });
      const options = { issuer: server.url, audience: server.apiUrl };
      app = Fastify();
      await app.register(async (api) => {
        // Nonces demanded (§9); the document of RFC 9728 published.
        await api.register(gatehouseFastify, { ...options, resourceMetadata: true, dpop: { nonce: true } });
        api.get('/notes', async (req) => ({ client: req.auth!.clientId }));
      });
      fastifyUrl = await app.listen({ host: '127.0.0.1', port: 0 });
      const guard = gatehouseMiddleware(options)();
      node = createServer((req: GuardedRequest, res) => guard(req, res, () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ client: req.auth!.clientId }))));
      await new Promise<void>((r) => node.listen(0, '127.0.0.1', r));
      nodeUrl = `http://127.0.0.1:${(node.address() as AddressInfo).port}`;

      // A resource server that asks the authorization server about every token (RFC 7662): cnf.jkt and token_type DPoP come from there.
      const i = await server.createClient({ grantTypes: ['client_credentials'], introspect: true });
      const byIntrospection = gatehouseMiddleware({ ...options, introspection: { clientId: i.id, clientSecret: i.secret!, allTokens: true, cacheTtlSec: 0 } })();
      introspected = createServer((req: GuardedRequest, res) => byIntrospection(req, res, () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ via: req.auth!.via }))));
      await new Promise<void>((r) => introspected.listen(0, '127.0.0.1', r));
      introspectedUrl = `http://127.0.0.1:${(introspected.address() as AddressInfo).port}`;

      const c = await server.createClient({ grantTypes: ['client_credentials'], scope: 'read', dpop: true });
      config = await oidc.discovery(new URL(server.url), c.id, undefined, oidc.ClientSecretBasic(c.secret!), { algorithm: 'oauth2', execute: [oidc.allowInsecureRequests] });
      key = await dpopKey();
      token = (await oidc.clientCredentialsGrant(config, { scope: 'read' }, { DPoP: oidc.getDPoPHandle(config, key) })).access_token;
    });
    after(async () => {
      await app.close();
      node.closeAllConnections();
      await new Promise((r) => node.close(r));
      introspected.closeAllConnections();
      await new Promise((r) => introspected.close(r));
      await server.close();
    });

    it('Fastify with nonces: use_dpop_nonce and a DPoP-Nonce header first, then the proof with that nonce is accepted', async () => {
      const url = `${fastifyUrl}/notes`;
      const first = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', url, { ath: ath(token) }) } });
      assert.equal(first.status, 401);
      assert.equal(((await first.json()) as { error: string }).error, 'use_dpop_nonce');
      const nonce = first.headers.get('dpop-nonce');
      assert.ok(nonce);
      assert.match(first.headers.get('www-authenticate')!, /DPoP error="use_dpop_nonce", error_description="[^"]+", algs="ES256 RS256 PS256 EdDSA Ed25519"/);
      const wrong = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', url, { ath: ath(token), nonce: `${nonce}x` }) } });
      assert.equal(wrong.status, 401);
      const ok = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', url, { ath: ath(token), nonce }) } });
      assert.equal(ok.status, 200);
      // An independent client follows the nonce by itself (it retries once with it).
      const res = await oidc.fetchProtectedResource(config, token, new URL(url), 'GET', undefined, undefined, { DPoP: oidc.getDPoPHandle(config, key) });
      assert.equal(res.status, 200);
      const meta = (await (await fetch(`${fastifyUrl}/.well-known/oauth-protected-resource`)).json()) as Record<string, unknown>;
      assert.deepEqual(meta.dpop_signing_alg_values_supported, ['ES256', 'RS256', 'PS256', 'EdDSA', 'Ed25519']);
      assert.equal(meta.dpop_bound_access_tokens_required, false);
    });

    it('plain Node: the bound token with a proof passes, as Bearer it is refused, a replayed proof is refused', async () => {
      const url = `${nodeUrl}/anything?x=1`;
      const p = await proof(key, 'GET', url, { ath: ath(token) });
      const ok = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: p } });
      assert.equal(ok.status, 200);
      const replay = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: p } });
      assert.equal(replay.status, 401);
      assert.equal(((await replay.json()) as { error: string }).error, 'invalid_dpop_proof');
      const bearer = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(bearer.status, 401);
      assert.match(bearer.headers.get('www-authenticate')!, /^Bearer realm="gatehouse", error="invalid_token", error_description="[^"]+", DPoP algs="[^"]+"$/);
    });

    it('by introspection: the binding comes from the authorization server (cnf.jkt, token_type DPoP)', async () => {
      const url = `${introspectedUrl}/notes`;
      const ok = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: await proof(key, 'GET', url, { ath: ath(token) }) } });
      assert.equal(ok.status, 200);
      assert.deepEqual(await ok.json(), { via: 'introspection' });
      const bearer = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(bearer.status, 401);
      const other = await dpopKey();
      const wrongKey = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: await proof(other, 'GET', url, { ath: ath(token) }) } });
      assert.equal(((await wrongKey.json()) as { error: string }).error, 'invalid_dpop_proof');
    });
  });
}
