import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as jose from 'jose';
import * as oidc from 'openid-client';
import { changeGrant, changeMembership, createGroup, createRole } from '../../src/core/access/admin.js';
import { Agent } from '../helpers/agent.js';
import { databaseKinds } from '../helpers/db.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { REDIRECT, person, relyingParty, signIn } from '../oidc/support.js';

/** Issue 28 item 2: scopes `groups` and `roles` through an OpenID relying party (openid-client), on both databases. */
for (const { kind, skip } of await databaseKinds()) {
  describe(`groups and roles claims with openid-client (${kind})`, { skip }, () => {
    let server: TestServer;
    let ana: Awaited<ReturnType<typeof person>>;
    let config: oidc.Configuration;
    before(async () => {
      server = await startServer({ db: kind });
      ana = await person(server, 'ana');
      const d = { access: server.gh.access.store, users: server.gh.storage.users, clock: server.gh.clock };
      await createGroup(d, 'ops');
      await createGroup(d, 'readers');
      await changeMembership(d, 'ops', 'ana', true);
      await changeMembership(d, 'readers', 'ana', true);
      await createRole(d, { name: 'deployer' });
      await createRole(d, { name: 'auditor' });
      await createRole(d, { name: 'unused' });
      await changeGrant(d, 'deployer', { group: 'ops' }, true);
      await changeGrant(d, 'auditor', { username: 'ana' }, true);
      const client = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid groups roles', trusted: true, introspect: true });
      config = await relyingParty(server, client.id, client.secret);
    });
    after(() => server.close());

    it('discovery lists the scopes and the claims', () => {
      const meta = config.serverMetadata();
      for (const s of ['groups', 'roles']) {
        assert.ok(meta.scopes_supported?.includes(s), s);
        assert.ok(meta.claims_supported?.includes(s), s);
      }
    });

    it('ID token, UserInfo, JWT access token and introspection carry groups and roles (directly and through groups)', async () => {
      const { tokens } = await signIn(config, new Agent(server.url), ana, 'openid groups roles');
      const id = tokens.claims()!;
      assert.deepEqual(id.groups, ['ops', 'readers']);
      assert.deepEqual(id.roles, ['auditor', 'deployer']);
      assert.deepEqual(await oidc.fetchUserInfo(config, tokens.access_token, ana.id), { sub: ana.id, groups: ['ops', 'readers'], roles: ['auditor', 'deployer'] });
      const at = jose.decodeJwt(tokens.access_token);
      assert.deepEqual([at.groups, at.roles], [['ops', 'readers'], ['auditor', 'deployer']]);
      const intro = await oidc.tokenIntrospection(config, tokens.access_token);
      assert.equal(intro.active, true);
      assert.deepEqual([intro.groups, intro.roles], [['ops', 'readers'], ['auditor', 'deployer']]);
    });

    it('only the scope granted releases its claim; none without either', async () => {
      const onlyRoles = await signIn(config, new Agent(server.url), ana, 'openid roles');
      assert.equal(onlyRoles.tokens.claims()!.groups, undefined);
      assert.deepEqual(onlyRoles.tokens.claims()!.roles, ['auditor', 'deployer']);
      assert.equal(jose.decodeJwt(onlyRoles.tokens.access_token).groups, undefined);
      const neither = await signIn(config, new Agent(server.url), ana, 'openid');
      assert.deepEqual(await oidc.fetchUserInfo(config, neither.tokens.access_token, ana.id), { sub: ana.id });
      const at = jose.decodeJwt(neither.tokens.access_token);
      assert.equal(at.roles, undefined);
      assert.equal(at.groups, undefined);
    });

    it('the claims parameter asks for them one by one, where the client may have their scope (OIDC Core 5.5)', async () => {
      const claims = JSON.stringify({ id_token: { groups: { essential: true } }, userinfo: { roles: null } });
      const { tokens } = await signIn(config, new Agent(server.url), ana, 'openid', { claims });
      assert.deepEqual(tokens.claims()!.groups, ['ops', 'readers']);
      assert.equal(tokens.claims()!.roles, undefined);
      assert.deepEqual(await oidc.fetchUserInfo(config, tokens.access_token, ana.id), { sub: ana.id, roles: ['auditor', 'deployer'] });
      // A client not registered for them gets nothing through the parameter.
      const plain = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid', trusted: true });
      const other = await relyingParty(server, plain.id, plain.secret);
      const narrow = await signIn(other, new Agent(server.url), ana, 'openid', { claims: JSON.stringify({ id_token: { roles: null }, userinfo: { groups: null } }) });
      assert.equal(narrow.tokens.claims()!.roles, undefined);
      assert.deepEqual(await oidc.fetchUserInfo(other, narrow.tokens.access_token, ana.id), { sub: ana.id });
    });

    it('the consent page says in plain words what each reveals', async () => {
      const app = await server.createClient({ redirectUris: [REDIRECT], scope: 'openid groups roles' });
      const agent = new Agent(server.url);
      assert.equal((await agent.login(ana.username, ana.password)).status, 303);
      const q = new URLSearchParams({ response_type: 'code', client_id: app.id, redirect_uri: REDIRECT, scope: 'openid groups roles', state: 's', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
      const page = await agent.get(`${new URL(config.serverMetadata().authorization_endpoint!).pathname}?${q}`);
      assert.equal(page.status, 200);
      const text = await page.text();
      assert.match(text, /See which groups you belong to/);
      assert.match(text, /See your roles/);
    });
  });
}
