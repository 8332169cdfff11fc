import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { invalidGrant, required, resolveScope, single, type Grant } from '../../src/index.js';
import { startServer, type TestServer } from '../helpers/server.js';

/**
 * An extension grant (RFC 6749 §4.5) as a deployment would write one: a
 * device that was paired out of band trades its pairing id for a token.
 */
const PAIRING = 'urn:example:params:oauth:grant-type:device-pairing';
const paired = new Map<string, string>();

const pairingGrant: Grant = {
  grantType: PAIRING,
  parameters: new Set(['pairing_id', 'scope']),
  async handle({ client, params }, { tokenIssuer, storage }) {
    const userId = paired.get(required(params, 'pairing_id'));
    if (!userId) throw invalidGrant('unknown pairing');
    const scope = resolveScope(single(params, 'scope'), client.scope);
    return tokenIssuer.respond(storage, { client, userId, scope, familyId: null }, false);
  },
};

describe('extension grants', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    server.gh.tokenEndpoint.register(pairingGrant);
  });
  after(() => server.close());

  const post = (id: string, secret: string, body: Record<string, string>) =>
    fetch(`${server.url}/oauth/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body),
    });

  it('dispatches by grant_type to a registered grant, for clients that list it', async () => {
    const user = await server.createUser('grace');
    const pairingId = randomUUID();
    paired.set(pairingId, user.id);
    const device = await server.createClient({ grantTypes: [PAIRING], redirectUris: [], scope: 'read' });
    const ok = await post(device.id, device.secret!, { grant_type: PAIRING, pairing_id: pairingId });
    assert.equal(ok.status, 200);
    const body = (await ok.json()) as { access_token: string; scope: string };
    assert.equal(body.scope, 'read');
    const claims = JSON.parse(Buffer.from(body.access_token.split('.')[1]!, 'base64url').toString());
    assert.equal(claims.sub, user.id);

    const bad = await post(device.id, device.secret!, { grant_type: PAIRING, pairing_id: 'nope' });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as { error: string }).error, 'invalid_grant');

    // A client not registered for the grant is refused; metadata advertises it.
    const other = await server.createClient({ grantTypes: ['client_credentials'], redirectUris: [] });
    const refused = await post(other.id, other.secret!, { grant_type: PAIRING, pairing_id: pairingId });
    assert.equal(((await refused.json()) as { error: string }).error, 'unauthorized_client');
    const meta = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as { grant_types_supported: string[] };
    assert.ok(meta.grant_types_supported.includes(PAIRING));
  });
});
