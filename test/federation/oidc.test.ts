import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { PROVIDER_ID, signInThroughProvider, startFederated, type Federated } from './support.js';

/**
 * An OpenID Connect provider (type `oidc`): endpoints from its discovery
 * document, the ID token checked (signature from its JWKS, iss, aud, nonce),
 * the subject its stable `sub`.
 */
describe('sign in through an OpenID Connect provider', () => {
  let f: Federated;
  before(async () => {
    f = await startFederated({ type: 'oidc' });
  });
  after(() => f?.close());

  it('creates an account from the ID token and user info, keyed by the provider\'s sub', async () => {
    const bob = await f.provider.createUser('bob');
    const rpAgent = new Agent(f.rp.url);
    const back = await signInThroughProvider(f, rpAgent, new Agent(f.provider.url), bob);
    assert.equal(back.headers.get('location'), '/federation/continue');
    const page = await (await rpAgent.get('/federation/continue')).text();
    assert.match(page, /as <strong>bob<\/strong>/);
    const form = parseForm(page);
    assert.equal((await rpAgent.post(form.action, { ...form.fields, username: 'bob' })).status, 303);
    const link = await f.rp.gh.federationStorage.identities.find(PROVIDER_ID, bob.id);
    assert.equal(link?.userId, (await f.rp.gh.storage.users.findByUsername('bob'))?.id);
    assert.equal((await f.rp.gh.storage.users.findByUsername('bob'))?.email, 'bob@example.test');
  });

  it('the authorization request carries a nonce and PKCE', async () => {
    const agent = new Agent(f.rp.url);
    const res = await agent.get('/federation/elsewhere/start');
    const q = new URL(res.headers.get('location')!).searchParams;
    assert.equal(q.get('scope'), 'openid profile email');
    assert.ok((q.get('nonce') ?? '').length >= 43);
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.equal(q.get('redirect_uri'), `${f.rp.url}/federation/elsewhere/callback`);
  });
});
