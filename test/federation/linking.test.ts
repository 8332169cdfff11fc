import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, parseForm } from '../helpers/agent.js';
import { PROVIDER_ID, signInThroughProvider, startFederated, type Federated } from './support.js';

/** The second form of the first-sign-in page: link an account you already have. */
function linkForm(html: string) {
  const i = html.indexOf('<h2 class="list-title">Or use an account');
  assert.ok(i > 0, 'no link form on the page');
  return parseForm(html.slice(i));
}

/**
 * Linking an external account to an existing local one happens only after
 * the person signs in to the local one with its password; never because the
 * provider reports a matching e-mail address or username.
 */
describe('linking an external account to an existing one', () => {
  let f: Federated;
  before(async () => {
    f = await startFederated();
  });
  after(() => f?.close());

  const linkOf = (subject: string) => f.rp.gh.federationStorage.identities.find(PROVIDER_ID, subject);

  it('needs the local password: a wrong one links nothing, the right one links', async () => {
    const alice = await f.rp.createUser('alice', 'alice local password');
    const external = await f.provider.createUser('alice.w', 'alice elsewhere password');
    const rpAgent = new Agent(f.rp.url);
    await signInThroughProvider(f, rpAgent, new Agent(f.provider.url), external);
    const page = await (await rpAgent.get('/federation/continue')).text();
    const form = linkForm(page);
    assert.equal(form.fields.action, 'link');

    const wrong = await rpAgent.post(form.action, { ...form.fields, username: 'alice', password: 'alice elsewhere password' });
    assert.equal(wrong.status, 401);
    assert.match(await wrong.text(), /Incorrect username or password/);
    assert.equal(await linkOf('alice.w'), undefined);
    assert.equal(rpAgent.cookie('gh_session'), undefined);

    const right = await rpAgent.post(form.action, { ...form.fields, username: 'alice', password: 'alice local password' });
    assert.equal(right.status, 303);
    assert.equal((await linkOf('alice.w'))?.userId, alice.id);
    assert.match(await (await rpAgent.get('/')).text(), /Signed in as <strong>alice<\/strong>/);

    // From now on the provider signs the person in to alice's account directly.
    const later = new Agent(f.rp.url);
    const back = await signInThroughProvider(f, later, new Agent(f.provider.url), external);
    assert.equal(back.status, 303);
    assert.equal(back.headers.get('location'), '/');
    assert.match(await (await later.get('/')).text(), /Signed in as <strong>alice<\/strong>/);
  });

  it('a matching e-mail address or username links nothing by itself', async () => {
    const carol = await f.rp.createUser('carol', 'carol local password', 'carol@example.test');
    // Someone at the provider claims carol's address and name.
    const impostor = await f.provider.createUser('carol', 'impostor password', 'carol@example.test');
    const rpAgent = new Agent(f.rp.url);
    const back = await signInThroughProvider(f, rpAgent, new Agent(f.provider.url), impostor);
    assert.equal(back.headers.get('location'), '/federation/continue');
    assert.equal(rpAgent.cookie('gh_session'), undefined);
    const page = await (await rpAgent.get('/federation/continue')).text();
    assert.match(page, /value="carol-2"/);
    // Linking to carol needs carol's password, which the impostor does not have.
    const form = linkForm(page);
    const attempt = await rpAgent.post(form.action, { ...form.fields, username: 'carol', password: 'impostor password' });
    assert.equal(attempt.status, 401);
    assert.equal(await linkOf('carol'), undefined);
    assert.deepEqual(await f.rp.gh.federationStorage.identities.listForUser(carol.id), []);
  });

  it('failed link attempts count against the account like failed sign-ins (rate limit)', async () => {
    await f.rp.createUser('erin', 'erin local password');
    const external = await f.provider.createUser('erin.x');
    const rpAgent = new Agent(f.rp.url);
    await signInThroughProvider(f, rpAgent, new Agent(f.provider.url), external);
    const form = linkForm(await (await rpAgent.get('/federation/continue')).text());
    let last = 0;
    for (let i = 0; i < 12 && last !== 429; i++) {
      last = (await rpAgent.post(form.action, { ...form.fields, username: 'erin', password: `guess ${i}` })).status;
    }
    assert.equal(last, 429);
    const right = await rpAgent.post(form.action, { ...form.fields, username: 'erin', password: 'erin local password' });
    assert.equal(right.status, 429);
    assert.equal(await linkOf('erin.x'), undefined);
  });
});
