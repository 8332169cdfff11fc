import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import * as oidc from 'openid-client';
// Through the package's "exports" entry, as another service would import it.
import { gatehouseFastify, gatehouseMiddleware, requireGroup, requireRole, type GuardedRequest } from 'gatehouse/middleware';
import { changeGrant, changeMembership, createGroup, createRole } from '../../src/core/access/admin.js';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { TestClock } from '../helpers/clock.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { enrolTotp, formFor, passwordStep, stepNow, totpCode } from '../mfa/support.js';
import { REDIRECT, person, relyingParty, signIn } from '../oidc/support.js';

const MFA_LEVEL = 'urn:gatehouse:acr:mfa';

/**
 * Issue 28 item 4: RFC 9470 on the resource side. `gatehouse/middleware`'s
 * `acr` and `maxAge` answer 401 insufficient_user_authentication with
 * `acr_values` / `max_age`; `requireRole` / `requireGroup` (and Fastify's
 * route `role` / `group`) answer 403 insufficient_scope. Tokens come from a
 * real code flow (openid-client): a password-only person and one with an
 * authenticator app.
 */
for (const { kind, skip } of await databaseKinds()) {
  describe(`step-up and roles in gatehouse/middleware (${kind})`, { skip }, () => {
    const clock = new TestClock();
    let server: TestServer;
    let nodeServer: Server;
    let fastifyApp: FastifyInstance;
    let nodeUrl: string;
    let fastifyUrl: string;
    /** Access tokens: ana signed in with a password; ben with password and app, and ben without scope roles. */
    const tokens: Record<'ana' | 'ben' | 'benNoRoles', string> = { ana: '', ben: '', benNoRoles: '' };

    before(async () => {
      server = await startServer({ db: kind });
      const ana = await person(server, 'ana');
      const ben = await person(server, 'ben');
      const d = { access: server.gh.access.store, users: server.gh.storage.users, clock: server.gh.clock };
      await createGroup(d, 'ops');
      await changeMembership(d, 'ops', 'ben', true);
      await createRole(d, { name: 'deployer' });
      await changeGrant(d, 'deployer', { username: 'ben' }, true);
      const enrolling = new Agent(server.url);
      assert.equal((await enrolling.login(ben.username, ben.password)).status, 303);
      const { secret } = await enrolTotp(enrolling);
      const step = await passwordStep(server.url, ben.username, ben.password);
      assert.equal((await step.agent.post('/login/second-step', { ...formFor(step.page, '/login/second-step'), code: totpCode(secret, stepNow() + 1) })).status, 303);
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid roles groups', trusted: true });
      const config: oidc.Configuration = await relyingParty(server, client.id, client.secret);
      tokens.ana = (await signIn(config, new Agent(server.url), ana, 'openid roles groups')).tokens.access_token;
      tokens.ben = (await signIn(config, step.agent, ben, 'openid roles groups')).tokens.access_token;
      tokens.benNoRoles = (await signIn(config, step.agent, ben, 'openid')).tokens.access_token;

      const options = { issuer: server.url, audience: server.apiUrl, clock };
      const requireToken = gatehouseMiddleware({ ...options, acr: MFA_LEVEL });
      const mfa = requireToken();
      const fresh = requireToken(undefined, { maxAge: 60 });
      const deployer = requireRole('deployer');
      const ops = requireGroup('ops');
      const ok = (res: import('node:http').ServerResponse, req: GuardedRequest) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ acr: req.auth!.acr }));
      const plain = gatehouseMiddleware(options)();
      nodeServer = createServer((req: GuardedRequest, res) => {
        const path = req.url;
        if (path === '/mfa') return mfa(req, res, () => ok(res, req));
        if (path === '/fresh') return fresh(req, res, () => ok(res, req));
        if (path === '/deploy') return plain(req, res, () => deployer(req, res, () => ok(res, req)));
        if (path === '/ops') return plain(req, res, () => ops(req, res, () => ok(res, req)));
        res.writeHead(404).end('{}');
      });
      await new Promise<void>((r) => nodeServer.listen(0, '127.0.0.1', r));
      nodeUrl = `http://127.0.0.1:${(nodeServer.address() as AddressInfo).port}`;

      fastifyApp = Fastify();
      await fastifyApp.register(async (api) => {
        await api.register(gatehouseFastify, options);
        api.get('/mfa', { config: { auth: { acr: MFA_LEVEL } } }, async (req) => ({ acr: req.auth!.acr }));
        api.get('/deploy', { config: { auth: { role: 'deployer' } } }, async () => ({ ok: true }));
        api.get('/ops', { config: { auth: { group: 'ops' } } }, async () => ({ ok: true }));
      });
      fastifyUrl = await fastifyApp.listen({ host: '127.0.0.1', port: 0 });
    });
    after(async () => {
      await fastifyApp.close();
      nodeServer.closeAllConnections();
      await new Promise((r) => nodeServer.close(r));
      await server.close();
    });

    const call = async (url: string, token: string) => {
      const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      return { status: res.status, challenge: res.headers.get('www-authenticate') ?? '', body: (await res.json()) as Record<string, unknown> };
    };

    it('acr below the level: 401 insufficient_user_authentication naming acr_values (RFC 9470 §3); met: 200', async () => {
      for (const base of [nodeUrl, fastifyUrl]) {
        const low = await call(`${base}/mfa`, tokens.ana);
        assert.equal(low.status, 401, base);
        assert.match(low.challenge, /^Bearer realm="gatehouse", error="insufficient_user_authentication", error_description="[^"]+", acr_values="urn:gatehouse:acr:mfa"$/);
        assert.equal(low.body.error, 'insufficient_user_authentication');
        const high = await call(`${base}/mfa`, tokens.ben);
        assert.deepEqual([high.status, high.body], [200, { acr: MFA_LEVEL }], base);
      }
    });

    it('auth_time older than maxAge: 401 insufficient_user_authentication with max_age', async () => {
      assert.equal((await call(`${nodeUrl}/fresh`, tokens.ben)).status, 200);
      clock.advance(120_000);
      try {
        const stale = await call(`${nodeUrl}/fresh`, tokens.ben);
        assert.equal(stale.status, 401);
        assert.match(stale.challenge, /error="insufficient_user_authentication"/);
        assert.match(stale.challenge, /, max_age=60$/);
        assert.doesNotMatch(stale.challenge, /acr_values/);
      } finally {
        clock.advance(-120_000);
      }
    });

    it('requireRole / requireGroup: 403 insufficient_scope without the name, naming scope roles when the claim is absent', async () => {
      for (const base of [nodeUrl, fastifyUrl]) {
        assert.equal((await call(`${base}/deploy`, tokens.ben)).status, 200, base);
        assert.equal((await call(`${base}/ops`, tokens.ben)).status, 200, base);
        const notHers = await call(`${base}/deploy`, tokens.ana);
        assert.equal(notHers.status, 403, base);
        assert.match(notHers.challenge, /error="insufficient_scope", error_description="this needs the role deployer"/);
        assert.equal((await call(`${base}/ops`, tokens.ana)).status, 403);
        const noClaim = await call(`${base}/deploy`, tokens.benNoRoles);
        assert.equal(noClaim.status, 403);
        assert.match(noClaim.challenge, /scope="roles"/);
      }
    });
  });
}
